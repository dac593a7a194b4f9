import Foundation
import Testing
import ThumbTestSupport
@testable import ThumbHTTP

private typealias Machine = ConnectionStateMachine<ManualClock>

/// `http.sendTimeoutSeconds` (HTTPServer.md): a response the client
/// takes nothing of for that long closes its connection.
@Suite struct SendTimeoutTests {
    private static func machine() -> Machine {
        Machine(limits: .init(requestTimeout: .seconds(10), idleTimeout: .seconds(60), maxHeaderBytes: 16_384,
                              sendTimeout: .seconds(30)))
    }

    @Test func aResponseWithoutProgressClosesAfterTheSendTimeout() throws {
        var m = Self.machine()
        #expect(m.start(now: at(0)).timer == .seconds(10))
        _ = m.bytesReceived(Array("GET /big HTTP/1.1\r\nHost: h\r\n\r\n".utf8), now: at(1))
        let writing = m.responseReady(HTTPResponse(status: 200, body: [1, 2, 3]), now: at(2))
        #expect(writing.timer == nil, "the accept-time timer is earlier; it moves when it fires")
        #expect(m.timerFired(now: at(10)).timer == .seconds(22), "due at 2 s + 30 s")
        #expect(m.writeProgressed(bytes: 0, now: at(20)).timer == nil, "progress only moves the deadline")
        let early = m.timerFired(now: at(32))
        #expect(early.timer == .seconds(18) && !early.sendTimedOut, "due at 50 s")
        let fired = m.timerFired(now: at(50))
        #expect(fired.sendTimedOut && fired.next.closed == true, "closed, the request counted finished")
        #expect(m.writeCompleted(now: at(51)).next.isNone)
    }

    @Test func aCompletedWriteGoesBackToTheIdleTimeout() {
        var m = Self.machine()
        _ = m.start(now: at(0))
        _ = m.bytesReceived(Array("GET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8), now: at(0))
        _ = m.responseReady(HTTPResponse(status: 200), now: at(0))
        _ = m.writeCompleted(now: at(1))
        #expect(m.timerFired(now: at(10)).timer == .seconds(51))
        let idle = m.timerFired(now: at(61))
        #expect(idle.next.closed == false && !idle.sendTimedOut)
    }

    @Test func theServersOwnErrorsAreBoundToo() throws {
        var m = Self.machine()
        _ = m.start(now: at(0))
        #expect(m.timerFired(now: at(10)).next.written?.response.status == 408)
        let fired = m.timerFired(now: at(40))
        #expect(fired.sendTimedOut && fired.next.closed == false)
    }

    /// A 4 KiB-window client that never reads a 16 MiB answer, with a 0.4 s
    /// send timeout: closed within about that, while a reading client is served.
    @Test func aClientThatNeverReadsIsClosed() throws {
        let body = [UInt8](repeating: 9, count: 16 << 20)
        let server = HTTPServer(configuration: HTTPServerConfiguration(sendTimeoutSeconds: 0.4)) { _, responder in
            responder.respond(HTTPResponse(status: 200, body: body))
        }
        let port = try server.listen(.inet(host: "127.0.0.1", port: 0))
        defer { server.stop() }
        let start = Date()
        let stuck = try SlowReader(port: port, request: "GET /big HTTP/1.1\r\nHost: h\r\n\r\n")
        let reader = try TestClient(port: port)
        reader.send("GET /big HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(reader.readResponse()?.body.count == 16 << 20)
        #expect(eventually(5) { server.statistics.sendTimeouts == 1 })
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed >= 0.4 && elapsed < 3, "\(elapsed) s")
        #expect(eventually(5) { server.statistics.connectionsOpen == 1 && server.statistics.requestsActive == 0 })
        let (received, ended) = stuck.readToEnd()
        #expect(ended && received < 16 << 20, "cut short: \(received) bytes")
        #expect(server.statistics.pendingResponseBytes == 0)
    }
}
