import Foundation
import Glibc
import Testing
import ThumbTestSupport
@testable import ThumbHTTP

/// The lingering close (HTTPServer.md § Closing a connection): a connection
/// the server ends sends FIN, and its socket reads and discards what still
/// comes, for at most 2 s and 4 MiB, before it closes, inside the I/O
/// queue's epoll set. Server-side sockets are counted from /proc, on real
/// loopback sockets. Where the client's FIN or the byte limit must be what
/// ends the lingering, the server lingers a minute, so no timing decides.
@Suite struct LingeringCloseTests {
    /// Answers `ok` to anything; closed sockets linger `lingering`.
    private static func makeServer(lingering: Duration = LingeringClose.seconds) throws -> (HTTPServer, UInt16) {
        let server = HTTPServer(configuration: HTTPServerConfiguration(), ioQueues: 2, lingering: lingering) { _, responder in
            responder.respond(HTTPResponse(status: 200, body: Array("ok".utf8)))
        }
        return (server, try server.listen(.inet(host: "127.0.0.1", port: 0)))
    }

    /// A refusal that comes while the client is still sending its body
    /// reaches the client: the bytes that follow it are read and dropped,
    /// not answered with a reset.
    @Test func aRefusalReachesAClientThatIsStillSending() throws {
        let (server, port) = try Self.makeServer()
        defer { server.stop() }
        let client = try TestClient(port: port)
        client.send("POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 2000000\r\n\r\n")
        // The body the client goes on sending after the head was refused.
        for _ in 0..<16 { client.send([UInt8](repeating: 0x61, count: 32768)) }
        let refusal = try #require(client.readResponse())
        #expect(refusal.status == 413 && refusal.headers["connection"] == "close")
        #expect(client.isClosedByPeer(), "FIN after the answer, not a reset")
        #expect(eventually { server.statistics.connectionsOpen == 0 })
    }

    /// A client that reads its answer and then neither sends nor closes:
    /// its socket lingers, then closes by itself within 2 s.
    @Test func aSilentClientsSocketClosesWithinTheLingeringTime() throws {
        let (server, port) = try Self.makeServer()
        defer { server.stop() }
        let client = try TestClient(port: port)
        client.send("GET /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        #expect(client.readResponse()?.status == 200)
        #expect(client.isClosedByPeer())
        let start = Date()
        #expect(ProcessDescriptors.serverSockets(port: port) == 1, "lingering, still open")
        #expect(eventually { ProcessDescriptors.serverSockets(port: port) == 0 })
        // Between 2 s less one sweep (0.25 s) and 2 s from its start, a little
        // before `start`; how late after 2 s a loaded machine fires the sweep
        // is not this test's to bound.
        let lingered = Date().timeIntervalSince(start)
        #expect(lingered > 1.5, "closed after \(lingered) s: not before its lingering time")
        #expect(server.statistics.connectionsOpen == 0)
    }

    /// A client that closes once it has its answer ends the lingering at
    /// once; one that closed first is not lingered on at all.
    @Test func aClientThatClosesEndsTheLingeringAtOnce() throws {
        let (server, port) = try Self.makeServer(lingering: .seconds(60))
        defer { server.stop() }
        for request in ["GET /a HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", "GET /b HTTP/1.0\r\n\r\n"] {
            do {
                let client = try TestClient(port: port)
                client.send(request)
                #expect(client.readResponse()?.status == 200)
                #expect(client.isClosedByPeer())
                #expect(ProcessDescriptors.serverSockets(port: port) == 1, "lingering")
            }
            // Well within the minute the server would linger.
            #expect(eventually { ProcessDescriptors.serverSockets(port: port) == 0 }, "closed on the client's FIN")
        }
        do {
            let idle = try TestClient(port: port)
            idle.send("GET /c HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(idle.readResponse()?.status == 200)
        }
        #expect(eventually { ProcessDescriptors.serverSockets(port: port) == 0 && server.statistics.connectionsOpen == 0 })
    }

    /// A client that goes on sending past 4 MiB after its answer is not
    /// finishing a request: the socket closes without waiting out the time.
    @Test func moreThanFourMebibytesAfterTheAnswerEndTheLingering() throws {
        let (server, port) = try Self.makeServer(lingering: .seconds(60))
        defer { server.stop() }
        let client = try TestClient(port: port)
        client.send("POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 9000000\r\n\r\n")
        #expect(client.readResponse()?.status == 413)
        let chunk = [UInt8](repeating: 0x62, count: 65536)
        var sent = 0
        // Bounded: 6 MiB at most, and each send waits at most the socket's timeout.
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(client.fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        while sent < 6 << 20 {
            let n = chunk.withUnsafeBytes { send(client.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { break }   // the server closed: reset, or no more room
            sent += n
        }
        #expect(sent > 4 << 20, "\(sent) bytes sent")
        // Well within the minute the server would linger.
        #expect(eventually { ProcessDescriptors.serverSockets(port: port) == 0 }, "closed after 4 MiB discarded")
    }
}
