import Foundation
import Glibc
import Testing

/// The real binary raises its soft open-file limit to the hard one, and warns
/// when even that is below `http.maxConnections` plus headroom.
@Suite(.serialized) struct FileLimitTests {
    /// `Max open files` soft and hard of a process, from /proc.
    private func openFileLimits(_ pid: pid_t) -> (soft: String, hard: String)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") }) else { return nil }
        let fields = line.dropFirst("Max open files".count).split(separator: " ")
        return fields.count >= 2 ? (String(fields[0]), String(fields[1])) : nil
    }

    private func start(_ box: DaemonSandbox, shell: String, maxConnections: Int) throws -> (DaemonProcess, UInt16) {
        let port = Loopback.freePort()
        try box.write(#"{"listen": "127.0.0.1:\#(port)", "diskStore": {"path": "\#(box.storePath)"}, "http": {"maxConnections": \#(maxConnections)}}"#)
        let daemon = try DaemonProcess(arguments: ["-c", shell + #"; exec "$0" "$@""#, DaemonProcess.binary,
                                                   "--config", box.configPath], binary: "/bin/sh")
        return (daemon, port)
    }

    @Test func theSoftLimitIsRaisedToTheHardOne() throws {
        let box = try DaemonSandbox("nofile")
        let (daemon, port) = try start(box, shell: "ulimit -Sn 200", maxConnections: 100)
        defer { daemon.stop() }
        #expect(daemon.waitUntilHealthy(port: port))
        let limits = try #require(openFileLimits(daemon.pid))
        #expect(limits.soft == limits.hard && limits.soft != "200", "limits: \(limits)")
        #expect(!daemon.stderr.contains("open-file limit"), "stderr: \(daemon.stderr)")
    }

    @Test func aHardLimitBelowMaxConnectionsIsLogged() throws {
        let box = try DaemonSandbox("nofile-low")
        let (daemon, port) = try start(box, shell: "ulimit -n 300", maxConnections: 4096)
        defer { daemon.stop() }
        #expect(daemon.waitUntilHealthy(port: port))
        let warned = daemon.waitForStderr(after: 0, timeout: 5) {
            $0.contains("open-file limit 300 is below http.maxConnections 4096")
        }
        #expect(warned, "stderr: \(daemon.stderr)")
    }
}
