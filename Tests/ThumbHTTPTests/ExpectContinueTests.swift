import Foundation
import Glibc
import Testing
import ThumbTestSupport
@testable import ThumbHTTP

private typealias Machine = ConnectionStateMachine<ManualClock>

/// `Expect: 100-continue` (HTTPServer.md): `100 Continue` when the head
/// is acceptable and a body is announced; otherwise the final status at once.
@Suite struct ExpectContinueTests {
    private static let head = "POST /p HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"

    @Test func theParserAsksOnceWhileTheBodyIsMissing() throws {
        var parser = RequestParser()
        parser.append(Array(Self.head.utf8))
        guard case .continueExpected(let r)? = parser.next() else { Issue.record("no continueExpected"); return }
        #expect(r.method == "POST" && r.path == "/p" && r.body.isEmpty)
        #expect(parser.next() == nil, "asked once")
        parser.append(Array("hel".utf8))
        #expect(parser.next() == nil)
        parser.append(Array("lo".utf8))
        guard case .request(let full)? = parser.next() else { Issue.record("no request"); return }
        #expect(full.body == Array("hello".utf8))
    }

    @Test func noContinueWhenTheBodyIsHereOrNoneIsAnnouncedOrHTTP10() {
        for text in [Self.head + "hello",
                     "POST /p HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n",
                     "GET /p HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n",
                     "POST /p HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"] {
            var parser = RequestParser()
            parser.append(Array(text.utf8))
            if case .continueExpected? = parser.next() { Issue.record("asked for \(text.debugDescription)") }
        }
    }

    @Test func aTooLargeBodyIs413WithoutContinue() {
        var parser = RequestParser()
        parser.append(Array("POST /p HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2000000\r\n\r\n".utf8))
        guard case .error(let e)? = parser.next() else { Issue.record("not refused"); return }
        #expect(e.status == 413)
    }

    @Test func theMachineSendsContinueThenStartsTheRequestWithItsBody() throws {
        var m = Machine(limits: .init(requestTimeout: .seconds(10), idleTimeout: .seconds(60), maxHeaderBytes: 16_384))
        _ = m.start(now: at(0))
        let asked = try #require(m.bytesReceived(Array(Self.head.utf8), now: at(1)).next.written)
        #expect(asked.isInterim && asked.response.status == 100)
        #expect(m.bytesReceived(Array("hello".utf8), now: at(1)).next.isNone, "the body waits for the 100 to be written")
        let started = m.writeCompleted(now: at(2))
        #expect(!started.requestFinished, "a 100 is not a response")
        #expect(try #require(started.next.startedRequest).body == Array("hello".utf8))
        #expect(m.responseReady(HTTPResponse(status: 202), now: at(2)).next.written?.keepAlive == true)
    }

    @Test func theBodyMustArriveWithinTheHeadsDeadline() throws {
        var m = Machine(limits: .init(requestTimeout: .seconds(10), idleTimeout: .seconds(60), maxHeaderBytes: 16_384))
        _ = m.start(now: at(0))
        _ = m.bytesReceived(Array(Self.head.utf8), now: at(1))
        _ = m.writeCompleted(now: at(1))
        #expect(m.timerFired(now: at(10)).next.written?.response.status == 408, "10 s from accept, not from the 100")
    }

    @Test func aRefusedHeadIsAnsweredAtOnceAndTheConnectionCloses() throws {
        var m = Machine(limits: .init(requestTimeout: .seconds(10), idleTimeout: .seconds(60), maxHeaderBytes: 16_384),
                        screenHead: { $0.header("Authorization") == nil ? HTTPResponse(status: 401) : nil })
        _ = m.start(now: at(0))
        let refused = try #require(m.bytesReceived(Array(Self.head.utf8), now: at(0)).next.written)
        #expect(refused.response.status == 401 && !refused.keepAlive && !refused.isInterim && refused.path == "/p")
        let done = m.writeCompleted(now: at(0))
        #expect(done.next.closed == false && !done.requestFinished)
    }

    @Test func overASocketContinueComesBeforeTheBodyIsSent() throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(), application: HTTPApplication(
            handler: { request, responder in responder.respond(HTTPResponse(status: 200, body: request.body)) },
            screenHead: { $0.header("Authorization") == "Bearer ok" ? nil
                : HTTPResponse(status: 401, headers: [("WWW-Authenticate", "Bearer")]) }))
        let port = try server.listen(.inet(host: "127.0.0.1", port: 0))
        defer { server.stop() }

        let client = try TestClient(port: port)
        client.send("POST /p HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer ok\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        #expect(client.readResponse(head: true)?.status == 100, "before any body byte is sent")
        client.send("hello")
        let r = try #require(client.readResponse())
        #expect(r.status == 200 && r.text == "hello")

        let refused = try TestClient(port: port)
        refused.send("POST /p HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        let answer = try #require(refused.readResponse())
        #expect(answer.status == 401 && answer.headers["www-authenticate"] == "Bearer" && answer.headers["connection"] == "close")
        #expect(refused.isClosedByPeer())

        let odd = try TestClient(port: port)
        odd.send("POST /p HTTP/1.1\r\nHost: h\r\nExpect: 200-ok\r\nContent-Length: 5\r\n\r\nhello")
        #expect(odd.readResponse()?.status == 417)
        #expect(server.statistics.byStatus[100] == nil, "interim answers are not counted as responses")
    }
}
