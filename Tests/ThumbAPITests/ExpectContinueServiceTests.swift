import Foundation
import Glibc
import Testing
import ThumbTestSupport
import ThumbHTTP
@testable import ThumbService

/// `Expect: 100-continue` against the real daemon wiring (HTTPServer.md):
/// the admin token, path and method are checked before the body is asked for.
@Suite struct ExpectContinueServiceTests {
    @Test func prefetchAsksForItsBodyOnlyWithTheToken() throws {
        try EndToEndTests.withDaemon({ $0.security.adminToken = "t0k3n" }) { daemon, _ in
            let head = "POST /prefetch HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 13\r\n"
            let anonymous = try RawClient(port: daemon.port)
            anonymous.send(head + "\r\n")
            let refused = anonymous.receive(until: "\r\n\r\n")
            #expect(refused.hasPrefix("HTTP/1.1 401 ") && refused.contains("WWW-Authenticate: Bearer\r\n"), "\(refused)")

            let wrongPath = try RawClient(port: daemon.port)
            wrongPath.send("POST /nope HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 13\r\n\r\n")
            #expect(wrongPath.receive(until: "\r\n\r\n").hasPrefix("HTTP/1.1 404 "))

            let admin = try RawClient(port: daemon.port)
            admin.send(head + "Authorization: Bearer t0k3n\r\n\r\n")
            #expect(admin.receive(until: "\r\n\r\n") == "HTTP/1.1 100 Continue\r\n\r\n")
            admin.send(#"{"items": []}"#)
            #expect(admin.receive(until: "\r\n\r\n").hasPrefix("HTTP/1.1 202 "))
        }
    }
}

/// A blocking loopback client that returns raw text.
private final class RawClient {
    let fd: Int32

    init(port: UInt16) throws {
        fd = Loopback.connect(port: port, receiveTimeout: 5)
        if fd < 0 { throw POSIXError(.ECONNREFUSED) }
    }

    deinit { close(fd) }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads one byte at a time up to and including `marker` (so nothing
    /// after it is consumed), or until the peer stops sending.
    func receive(until marker: String) -> String {
        var out: [UInt8] = []
        let end = Array(marker.utf8)
        var byte: UInt8 = 0
        while !out.ends(with: end), recv(fd, &byte, 1, 0) == 1 { out.append(byte) }
        return String(decoding: out, as: UTF8.self)
    }
}

private extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
