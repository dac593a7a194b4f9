import Dispatch
import Foundation
import Glibc
import ThumbAPI
import ThumbHTTP
import ThumbService

/// `thumbd [--config FILE] [--listen ADDR]`: the service, in the foreground.
enum Serve {
    static func run(configPath: String?, listen: String?) -> Int32 {
        var config = DaemonConfiguration()
        if let configPath {
            do {
                config = try DaemonConfiguration.load(path: configPath)
            } catch {
                FileHandle.standardError.write(Data("thumbd: \(error)\n".utf8))
                return 2
            }
        }
        if let listen { config.listen = listen }
        do {
            // Also for the built-in `nobody`: a worker must never start without a user to become.
            _ = try config.sandbox.identity()
        } catch {
            FileHandle.standardError.write(Data("thumbd: \(error)\n".utf8))
            return 2
        }
        let log = Log(level: config.log.level, accessLog: config.log.accessLog)
        if let files = FileLimit.raiseToHard(), files < config.http.maxConnections + FileLimit.headroom {
            log.write(.warning, "open-file limit \(files) is below http.maxConnections \(config.http.maxConnections) "
                      + "+ \(FileLimit.headroom); raise LimitNOFILE")
        }
        guard var address = ListenAddress(config.listen) else {
            FileHandle.standardError.write(Data("thumbd: listen: '\(config.listen)' is not IP:PORT, localhost:PORT, [IPv6]:PORT or unix:/path\n".utf8))
            return 2
        }
        let env = ProcessInfo.processInfo.environment
        if let inherited = ListenAddress.inherited(listenFDs: env["LISTEN_FDS"], listenPID: env["LISTEN_PID"], pid: getpid()) {
            address = inherited
            unsetenv("LISTEN_FDS"); unsetenv("LISTEN_PID"); unsetenv("LISTEN_FDNAMES")
        }
        guard let storePath = config.service.diskStore.resolvedPath(environment: env) else {
            log.write(.error, "disk store: set diskStore.path (no CACHE_DIRECTORY, XDG_CACHE_HOME or HOME)")
            return 1
        }
        let disk: DiskStore
        do {
            disk = try DiskStore(directory: storePath, maxBytes: config.service.diskStore.maxBytes) { log.write(.warning, $0) }
        } catch {
            log.write(.error, "disk store: \(error.message)")
            return 1
        }
        let daemon = Daemon(configuration: config, disk: disk, accessLog: { r in
            if log.accessLogEnabled {
                log.write(.info, "\(r.method) \(Log.escaped(r.path)) \(r.status) \(r.bodyBytes) \(String(format: "%.1f", r.milliseconds))ms \(r.cache ?? "-")")
            }
        }, warning: { log.write(.warning, $0) })
        daemon.setWorkerLog { log.write(.warning, Log.escaped($0)) }
        daemon.handler.setInternalErrorLog { log.write(.error, "internal error: \(Log.escaped($0))") }
        daemon.service.setStoreFailureLog({ log.write(.warning, "s3 source \(Log.escaped($0))") },
                                          sharedStore: { log.write(.warning, Log.escaped($0)) })
        // Before listening: a reload or a stop may come as soon as systemd
        // sees the socket, and a client may leave before its answer is written.
        signal(SIGPIPE, SIG_IGN)
        Signals.on([SIGTERM, SIGINT]) {
            log.write(.info, "draining")
            SystemdNotifier.notify("STOPPING=1")
            daemon.drain(deadline: 10) {
                log.write(.info, "drained; exiting")
                exit(0)
            }
        }
        Signals.on([SIGHUP]) {
            Reload.run(path: configPath, listenOverride: listen, daemon: daemon, log: log)
        }
        do {
            try daemon.listen(address)
        } catch {
            log.write(.error, "cannot listen on \(address): \(error)")
            return 1
        }
        log.write(.info, "thumbd listening on \(address), originals in \(storePath)")
        SystemdNotifier.notify("READY=1")
        if let interval = Watchdog.interval(environment: env, pid: getpid()) {
            Watchdog(server: daemon.server, renders: daemon.service.renders, log: log).start(every: interval)
        }
        dispatchMain()
    }
}
