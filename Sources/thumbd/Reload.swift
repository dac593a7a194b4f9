import Foundation
import Glibc
import ThumbAPI
import ThumbService

/// SIGHUP (ServiceLife.md): re-read the config file and apply it without dropping a
/// connection. A file that does not load changes nothing. What only a restart
/// can change (`listen`, `workers`, `diskStore.path`) is kept and logged.
enum Reload {
    static func run(path: String?, listenOverride: String?, daemon: Daemon, log: Log) {
        SystemdNotifier.notify("RELOADING=1\nMONOTONIC_USEC=\(monotonicMicroseconds())")
        defer { SystemdNotifier.notify("READY=1") }
        guard let path else {
            log.write(.info, "reload: no --config file; built-in defaults stay in force")
            return
        }
        var new: DaemonConfiguration
        do {
            new = try DaemonConfiguration.load(path: path)
        } catch {
            log.write(.error, "reload failed, keeping the old configuration: \(error)")
            return
        }
        if let listenOverride { new.listen = listenOverride }
        for key in daemon.reload(new) {
            log.write(.warning, "reload: \(key) changed; it takes effect after a restart")
        }
        log.update(level: new.log.level, accessLog: new.log.accessLog)
        log.write(.info, "reloaded configuration from \(path)")
    }

    /// `MONOTONIC_USEC` for `RELOADING=1` (systemd's notify-reload protocol).
    /// Read straight from `CLOCK_MONOTONIC`: systemd compares it with its own
    /// reading of that clock, so it is a value on the wire, not thumbd's time
    /// (Swift's `ContinuousClock` is `CLOCK_BOOTTIME` on Linux, and no `Clock`
    /// hands out its raw reading).
    private static func monotonicMicroseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now.tv_sec * 1_000_000 + now.tv_nsec / 1000
    }
}
