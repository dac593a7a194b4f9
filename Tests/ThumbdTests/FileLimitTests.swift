import Foundation
import Glibc
import Testing
import ThumbTestSupport

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

    /// `ulimit -n 64` and 150 clients at once: accepts fail for want of file
    /// descriptors; thumbd says so once, does not crash or spin, and serves
    /// again as soon as the clients go.
    @Test func runningOutOfFileDescriptorsIsLoggedAndSurvived() throws {
        let box = try DaemonSandbox("nofile-64")
        let (daemon, port) = try start(box, shell: "ulimit -n 64", maxConnections: 4096)
        defer { daemon.stop() }
        #expect(daemon.waitUntilHealthy(port: port))
        let mark = daemon.stderrMark
        var clients: [Int32] = []
        defer { clients.forEach { close($0) } }
        for _ in 0..<150 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { break }
            var address = Loopback.address(port: port)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if connected == 0 { clients.append(fd) } else { close(fd) }
        }
        #expect(clients.count > 64, "the kernel's backlog takes connections past the daemon's limit")
        let warned = daemon.waitForStderr(after: mark, timeout: 5) { $0.contains("accept: ") && $0.contains("open files") }
        #expect(warned, "stderr: \(daemon.stderr(after: mark))")
        #expect(daemon.isRunning)
        clients.forEach { close($0) }
        clients = []
        #expect(daemon.waitUntilHealthy(port: port, timeout: 10), "serves again once the clients are gone")
        let warnings = daemon.stderr(after: mark).components(separatedBy: "accept: ").count - 1
        #expect(warnings == 1, "one warning for the burst: \(daemon.stderr(after: mark))")
    }
}
