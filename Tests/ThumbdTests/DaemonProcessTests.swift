import Foundation
import Glibc
import Testing
import ThumbTestSupport

/// The real `thumbd` binary as a service: started, asked, killed, restarted.
@Suite(.serialized) struct DaemonProcessTests {
    /// A loopback origin on a raw socket that announces 400 000 bytes and then
    /// drips them, so a download is reliably in progress when thumbd is killed.
    final class DripOrigin: @unchecked Sendable {
        let fd: Int32
        let port: UInt16
        init() {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, "127.0.0.1", &a.sin_addr)
            _ = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            listen(listener, 8)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
            fd = listener
            port = UInt16(bigEndian: a.sin_port)
            Thread.detachNewThread {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                var buffer = [UInt8](repeating: 0, count: 4096)
                _ = recv(client, &buffer, buffer.count, 0)
                let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 400000\r\n\r\n".utf8)
                _ = send(client, head, head.count, Int32(MSG_NOSIGNAL))
                for _ in 0..<50 {   // bounded: 5 s at most
                    if send(client, [UInt8](repeating: 0xFF, count: 100), 100, Int32(MSG_NOSIGNAL)) < 0 { break }
                    usleep(100_000)
                }
                close(client)
            }
        }
        deinit { close(fd) }
    }

    private func freePort() -> UInt16 { Loopback.freePort() }

    private func start(config: String) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: ThumbnailCommandTests.binary)
        p.arguments = ["--config", config]
        p.standardError = FileHandle.nullDevice
        try p.run()
        return p
    }

    private func get(_ port: UInt16, _ path: String, timeout: Double = 2) -> Int {
        let out = Pipe()
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        curl.arguments = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-m", String(timeout), "http://127.0.0.1:\(port)\(path)"]
        curl.standardOutput = out
        try? curl.run()
        curl.waitUntilExit()
        return Int(String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)) ?? 0
    }

    @Test func sigkillDuringADownloadLeavesNothingThatIsServedLater() throws {
        let dir = NSTemporaryDirectory() + "thumbd-kill-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let port = freePort()
        let config = dir + ".json"
        defer { unlink(config) }
        let json = #"{"listen": "127.0.0.1:\#(port)", "origin": {"allowPrivateNetworks": true}, "diskStore": {"path": "\#(dir)"}, "log": {"accessLog": false}}"#
        FileManager.default.createFile(atPath: config, contents: Data(json.utf8))
        let origin = DripOrigin()
        let daemon = try start(config: config)
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }
        #expect(eventually { get(port, "/healthz") == 200 })
        let url = "http%3A%2F%2F127.0.0.1%3A\(origin.port)%2Fdrip.jpg"
        // The request times out on our side while thumbd is still downloading; then kill -9.
        #expect(get(port, "/thumbnail?url=\(url)&w=10", timeout: 0.5) == 0)
        kill(daemon.processIdentifier, SIGKILL)
        daemon.waitUntilExit()
        let files = FileManager.default.enumerator(atPath: dir)?.allObjects.compactMap { $0 as? String } ?? []
        #expect(!files.contains { $0.count > 60 && !$0.hasPrefix("tmp/") }, "no original was published: \(files)")

        // Restarted, the store starts clean and the source is not served from disk.
        let again = try start(config: config)
        defer { kill(again.processIdentifier, SIGTERM); again.waitUntilExit() }
        let ready = eventually { get(port, "/healthz") == 200 }
        let tmp = (try? FileManager.default.contentsOfDirectory(atPath: dir + "/tmp")) ?? []
        #expect(ready && tmp.isEmpty)
        #expect(get(port, "/thumbnail?url=\(url)&w=10", timeout: 3) != 200, "the drip origin is gone; nothing stale is served")
    }

    @Test func sigtermDrainsAndExitsZeroAndCheckConfigValidates() throws {
        let port = freePort()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: ThumbnailCommandTests.binary)
        p.arguments = ["--listen", "127.0.0.1:\(port)"]
        p.environment = ProcessInfo.processInfo.environment.merging(["HOME": NSTemporaryDirectory()]) { $1 }
        p.standardError = FileHandle.nullDevice
        try p.run()
        #expect(eventually { get(port, "/healthz") == 200 })
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)

        let bad = NSTemporaryDirectory() + "thumbd-bad-\(UUID().uuidString).json"
        FileManager.default.createFile(atPath: bad, contents: Data(#"{"limits": {"maxSourceByte": 1}}"#.utf8))
        defer { unlink(bad) }
        let check = Process()
        check.executableURL = URL(fileURLWithPath: ThumbnailCommandTests.binary)
        check.arguments = ["check-config", "--config", bad]
        let err = Pipe()
        check.standardError = err
        try check.run()
        check.waitUntilExit()
        #expect(check.terminationStatus == 2)
        #expect(String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).contains("limits.maxSourceByte"))
    }
}
