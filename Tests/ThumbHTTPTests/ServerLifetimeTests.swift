import Foundation
import Testing
import ThumbTestSupport
@testable import ThumbHTTP

/// A stopped server is freed, with its connections: nothing it made (listener
/// source, connection sources, their handlers) keeps it alive in a cycle.
/// LeakSanitizer would report such a cycle only in the sanitizer run; this
/// checks the same in every run.
@Suite struct ServerLifetimeTests {
    @Test func aStoppedServerIsFreedWithItsConnections() throws {
        weak var freedServer: HTTPServer?
        weak var freedConnection: Connection?
        do {
            let (server, port) = try HTTPServerTests.makeServer()
            freedServer = server
            // A kept-alive connection that served a request, and one with a head half sent.
            let served = try TestClient(port: port)
            served.send("GET /a HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(served.readResponse()?.status == 200)
            let partial = try TestClient(port: port)
            partial.send("GET /b HTTP/1.1\r\nHo")
            #expect(eventually(5) { server.openConnections.count == 2 })
            freedConnection = server.openConnections.first
            server.stop()
            #expect(served.isClosedByPeer() && partial.isClosedByPeer())
        }
        #expect(eventually(5) { freedServer == nil && freedConnection == nil },
                "server freed: \(freedServer == nil), connection freed: \(freedConnection == nil)")
    }
}
