import Foundation
import Glibc
import Testing
import ThumbTestSupport
@testable import ThumbHTTP

/// The hazards of edge-triggered sockets (HTTPServer.md § I/O queues):
/// an edge is reported once, so bytes that arrive while the server is busy
/// with something else must not be left in the socket. Loopback only.
@Suite struct EdgeTriggeredTests {
    private static let bigBody = 4 << 20

    /// `/big`: 4 MiB of 7s; `/slow`: "slow" after 300 ms from another thread;
    /// anything else echoes its method, path and query.
    private static func makeServer(ioQueues: Int = 2) throws -> (HTTPServer, UInt16) {
        let server = HTTPServer(configuration: HTTPServerConfiguration(), ioQueues: ioQueues) { request, responder in
            switch request.path {
            case "/big":
                responder.respond(HTTPResponse(status: 200, body: [UInt8](repeating: 7, count: bigBody)))
            case "/slow":
                DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
                    responder.respond(HTTPResponse(status: 200, body: Array("slow".utf8)))
                }
            default:
                let q = request.query.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
                responder.respond(HTTPResponse(status: 200, body: Array("\(request.method) \(request.path) \(q)".utf8)))
            }
        }
        let port = try server.listen(ListenAddress.inet(host: "127.0.0.1", port: 0))
        return (server, port)
    }

    @Test func aRequestPipelinedWhileAResponseWaitsForRoomIsAnsweredAfterIt() throws {
        let (server, port) = try Self.makeServer()
        defer { server.stop() }
        let client = try TestClient(port: port, receiveBuffer: 4096)
        client.send("GET /big HTTP/1.1\r\nHost: h\r\n\r\n")
        // The 4 MiB cannot fit the socket buffers of a client that reads
        // nothing: the server's write hits EAGAIN and waits for a writable edge.
        #expect(eventually { server.statistics.pendingResponseBytes > 0 })
        // A window for a wrong send to show itself: a response that must stay waiting has no event to wait on.
        usleep(200_000)
        #expect(server.statistics.pendingResponseBytes > 0, "the response should still be waiting for room")
        client.send("GET /next?n=2 HTTP/1.1\r\nHost: h\r\n\r\n")
        let first = client.readResponse()
        #expect(first?.status == 200)
        #expect(first?.body.count == Self.bigBody)
        #expect(first?.body.allSatisfy { $0 == 7 } == true)
        #expect(client.readResponse()?.text == "GET /next n=2")
    }

    @Test func bytesLeftInTheSocketWhileReadingIsPausedAreReadWhenItResumes() throws {
        let (server, port) = try Self.makeServer()
        defer { server.stop() }
        // 1 MiB of send buffer: the whole burst is queued at once and the
        // client sends nothing after it.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var sendBuffer: Int32 = 1 << 20
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        try #require(Loopback.connect(fd, port: port) == 0)
        // While `/slow` is pending the server keeps reading pipelined bytes
        // until it holds more than maxHeaderBytes + 64 KiB, then pauses: 300
        // requests of ~1 KiB leave most of them in the socket, where no new
        // edge will announce them.
        let pad = String(repeating: "p", count: 1000)
        let count = 300
        var burst = "GET /slow HTTP/1.1\r\nHost: h\r\n\r\n"
        for i in 0..<count { burst += "GET /p?i=\(i) HTTP/1.1\r\nHost: h\r\nX-Pad: \(pad)\r\n\r\n" }
        let bytes = Array(burst.utf8)
        #expect(bytes.count > HTTPServerConfiguration().maxHeaderBytes + 65536 + 100_000)
        let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        try #require(sent == bytes.count)
        let reader = TestClient(adopting: fd)
        #expect(reader.readResponse()?.text == "slow")
        var answered = 0
        for i in 0..<count where reader.readResponse()?.text == "GET /p i=\(i)" { answered += 1 }
        #expect(answered == count)
    }

    @Test func twoHundredConnectionsOnOneQueueAreAllAnswered() throws {
        let (server, port) = try Self.makeServer(ioQueues: 1)
        defer { server.stop() }
        let clients = try (0..<200).map { _ in try TestClient(port: port) }
        for round in 0..<3 {
            for (i, c) in clients.enumerated() { c.send("GET /c?i=\(i)&r=\(round) HTTP/1.1\r\nHost: h\r\n\r\n") }
            var answered = 0
            for (i, c) in clients.enumerated() where c.readResponse()?.text == "GET /c i=\(i)&r=\(round)" { answered += 1 }
            #expect(answered == 200, "round \(round)")
        }
        #expect(server.statistics.connectionsOpen == 200)
    }
}
