import Foundation
import Glibc
import Testing
import ThumbTestSupport
@testable import ThumbHTTP

private typealias Machine = ConnectionStateMachine<ManualClock>

/// Issue 19 (13), HTTPServer.md § Closing a connection: a client that sends
/// its request and then shuts down its sending side (FIN) still gets the
/// answer (RFC 9112 § 9.6), the connection closing after it. To tell such a
/// client from one that closed altogether (whose request is cancelled, as
/// before), an HTTP/1.1 request still with the handler gets a bare
/// `100 Continue` at the end of stream: the half-closed client ignores it,
/// the gone one's kernel answers with a reset.
@Suite struct HalfCloseTests {
    @Test func aHalfClosedClientGetsItsSlowAnswerThenTheConnectionCloses() throws {
        let cancelled = Counter()
        let (server, port) = try HTTPServerTests.makeServer(cancelled: cancelled)
        defer { server.stop() }
        let text = try Self.exchangeThenHalfClose(port: port, "GET /slow HTTP/1.1\r\nHost: h\r\n\r\n")
        let probe = "HTTP/1.1 100 Continue\r\n\r\n"
        #expect(text.hasPrefix(probe), "the interim answer that tells a half-close from a close")
        let answer = text.hasPrefix(probe) ? String(text.dropFirst(probe.count)) : text
        #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n") && answer.hasSuffix("\r\n\r\nslow"), "\(text.debugDescription)")
        #expect(answer.contains("\r\nConnection: close\r\n"), "no keep-alive after the client's end of stream")
        #expect(cancelled.count == 0)
        #expect(eventually { server.statistics.connectionsOpen == 0 && server.statistics.requestsActive == 0 })
    }

    /// Everything the client sent before its FIN is answered, in order; only
    /// the last answer says close.
    @Test func pipelinedRequestsBeforeTheEndOfStreamAreAllAnswered() throws {
        let (server, port) = try HTTPServerTests.makeServer()
        defer { server.stop() }
        let text = try Self.exchangeThenHalfClose(port: port,
            "GET /slow HTTP/1.1\r\nHost: h\r\n\r\nGET /a?n=1 HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n")
        let answers = text.replacingOccurrences(of: "HTTP/1.1 100 Continue\r\n\r\n", with: "")
            .components(separatedBy: "HTTP/1.1 200 OK\r\n").dropFirst()
        #expect(answers.count == 3, "\(text.debugDescription)")
        #expect(answers.map { $0.components(separatedBy: "\r\n\r\n").last ?? "" } == ["slow", "GET /a n=1 0", "GET /b  0"])
        #expect(answers.map { $0.contains("\r\nConnection: close\r\n") } == [false, false, true])
        #expect(eventually { server.statistics.connectionsOpen == 0 })
    }

    /// HTTP/1.0 gets no `100 Continue` (RFC 9110 § 15.2), just its answer.
    @Test func anHTTP10ClientThatHalfClosesGetsItsAnswerAlone() throws {
        let (server, port) = try HTTPServerTests.makeServer()
        defer { server.stop() }
        let text = try Self.exchangeThenHalfClose(port: port, "GET /slow HTTP/1.0\r\n\r\n")
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n") && text.hasSuffix("\r\n\r\nslow"), "\(text.debugDescription)")
    }

    /// End of stream with nothing complete to answer closes at once, as before.
    @Test func aPartialRequestThenEndOfStreamClosesWithoutAnswer() throws {
        let (server, port) = try HTTPServerTests.makeServer()
        defer { server.stop() }
        let text = try Self.exchangeThenHalfClose(port: port, "GET /slow HTTP/1.1\r\nHo")
        #expect(text.isEmpty)
        #expect(eventually { server.statistics.connectionsOpen == 0 && server.statistics.requestsActive == 0 })
    }

    @Test func theMachineAnswersAfterEndOfStreamAndProbesOnlyHTTP11() throws {
        for (version, probes) in [("1.1", true), ("1.0", false)] {
            var m = Machine(limits: .init(requestTimeout: .seconds(10), idleTimeout: .seconds(60), maxHeaderBytes: 16_384))
            _ = m.start(now: at(0))
            #expect(m.bytesReceived(bytes("GET /r HTTP/\(version)\r\nHost: h\r\n\r\n"), now: at(0)).next.startedRequest != nil)
            let ended = m.inputEnded(now: at(1))
            #expect(ended.next.isProbe == probes && ended.next.closed == nil, "HTTP/\(version): kept open")
            #expect(m.inputEnded(now: at(1)).next.isNone, "once")
            let answer = try #require(m.responseReady(ok("r"), now: at(2)).next.written)
            #expect(!answer.keepAlive, "HTTP/\(version): Connection: close")
            #expect(m.roomDecided(.write, for: answer).isSend)
            #expect(m.writeCompleted(now: at(3)).next.closed == false, "closed once answered, nothing cancelled")
        }
        var idle = Machine(limits: .init(requestTimeout: .seconds(10), idleTimeout: .seconds(60), maxHeaderBytes: 16_384))
        _ = idle.start(now: at(0))
        #expect(idle.inputEnded(now: at(1)).next.closed == false, "nothing to answer: closed at once")
    }

    /// Sends `request`, shuts down the sending side, and reads to end of
    /// stream (at most 5 s).
    private static func exchangeThenHalfClose(port: UInt16, _ request: String) throws -> String {
        let fd = Loopback.connect(port: port, receiveTimeout: 5)
        try #require(fd >= 0)
        defer { close(fd) }
        let bytes = Array(request.utf8)
        try #require(send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count)
        shutdown(fd, Int32(SHUT_WR))
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            received += chunk[0..<n]
        }
        return String(decoding: received, as: UTF8.self)
    }
}
