import Foundation
import Testing
import ThumbTestSupport
@testable import ThumbHTTP

private let second: UInt64 = 1_000_000_000
private typealias Machine = ConnectionStateMachine

/// `http.sendTimeoutSeconds` (HTTPServer.md): a response the client
/// takes nothing of for that long closes its connection.
@Suite struct SendTimeoutTests {
    private static func machine() -> Machine {
        Machine(limits: .init(requestTimeout: 10 * second, idleTimeout: 60 * second, maxHeaderBytes: 16_384,
                              sendTimeout: 30 * second))
    }

    @Test func aResponseWithoutProgressClosesAfterTheSendTimeout() throws {
        var m = Self.machine()
        #expect(m.start(now: 0).timer == 10 * second)
        _ = m.bytesReceived(Array("GET /big HTTP/1.1\r\nHost: h\r\n\r\n".utf8), now: second)
        let writing = m.responseReady(HTTPResponse(status: 200, body: [1, 2, 3]), now: 2 * second)
        #expect(writing.timer == nil, "the accept-time timer is earlier; it moves when it fires")
        #expect(m.timerFired(now: 10 * second).timer == 32 * second)
        #expect(m.writeProgressed(now: 20 * second).timer == nil, "progress only moves the deadline")
        let early = m.timerFired(now: 32 * second)
        #expect(early.timer == 50 * second && !early.sendTimedOut)
        let fired = m.timerFired(now: 50 * second)
        #expect(fired.sendTimedOut && fired.next.closed == true, "closed, the request counted finished")
        #expect(m.writeCompleted(now: 51 * second).next.isNone)
    }

    @Test func aCompletedWriteGoesBackToTheIdleTimeout() {
        var m = Self.machine()
        _ = m.start(now: 0)
        _ = m.bytesReceived(Array("GET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8), now: 0)
        _ = m.responseReady(HTTPResponse(status: 200), now: 0)
        _ = m.writeCompleted(now: second)
        #expect(m.timerFired(now: 10 * second).timer == 61 * second)
        let idle = m.timerFired(now: 61 * second)
        #expect(idle.next.closed == false && !idle.sendTimedOut)
    }

    @Test func theServersOwnErrorsAreBoundToo() throws {
        var m = Self.machine()
        _ = m.start(now: 0)
        #expect(m.timerFired(now: 10 * second).next.written?.response.status == 408)
        let fired = m.timerFired(now: 40 * second)
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


private extension ConnectionStateMachine.Next {
    var isNone: Bool { if case .none = self { true } else { false } }
    var written: ConnectionStateMachine.OutgoingResponse? { if case .write(let w) = self { w } else { nil } }
    var closed: Bool? { if case .close(let cancel) = self { cancel } else { nil } }
}
