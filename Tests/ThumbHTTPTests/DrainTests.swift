import Foundation
import Glibc
import Synchronization
import Testing
import ThumbTestSupport
@testable import ThumbHTTP

/// The drain (ServiceLife.md) answers what the client sent before it began.
@Suite struct DrainTests {
    /// The request is in the socket when the drain reaches its connection,
    /// but the connection's read event has not run yet (its queue is held
    /// until then): it is read and answered, `/healthz` with 503, not dropped
    /// with the connection as if it were idle.
    @Test(arguments: [("/a", 200), ("/healthz", 503)])
    func aRequestAlreadyInTheSocketIsAnswered(_ path: String, _ status: Int) throws {
        let serverBox = Mutex<HTTPServer?>(nil)
        let server = HTTPServer(configuration: HTTPServerConfiguration()) { request, responder in
            let draining = serverBox.withLock { $0?.isDraining } ?? false
            responder.respond(HTTPResponse(status: request.path == "/healthz" && draining ? 503 : 200,
                                           body: Array(request.path.utf8)))
        }
        serverBox.withLock { $0 = server }
        let port = try server.listen(.inet(host: "127.0.0.1", port: 0))
        // The handler reads the server through the box: emptied at the end, or the two keep each other alive.
        defer { server.stop(); serverBox.withLock { $0 = nil } }
        let client = try TestClient(port: port)
        client.send("GET /first HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(client.readResponse()?.status == 200)
        #expect(eventually(5) { server.statistics.requestsActive == 0 })
        let connection = try #require(server.openConnections.first)

        let sent = DispatchSemaphore(value: 0)
        let drained = DispatchSemaphore(value: 0)
        connection.queue.async {
            sent.wait()
            var p = pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 2000)
            server.drain(deadline: 5) { drained.signal() }
            connection.beginDrain()
        }
        client.send("GET \(path) HTTP/1.1\r\nHost: h\r\n\r\n")
        sent.signal()
        let r = try #require(client.readResponse())
        #expect(r.status == status && r.text == path && r.headers["connection"] == "close")
        #expect(client.isClosedByPeer())
        #expect(drained.wait(timeout: .now() + 5) == .success)
    }
}
