import Testing
import ThumbTestSupport
@testable import ThumbHTTP

private typealias Machine = ConnectionStateMachine<ManualClock>

/// The connection's rules on a manual clock: no sockets, no sleeps.
/// Request timeout 10 s, idle timeout 60 s unless a test says otherwise.
@Suite struct ConnectionStateMachineTests {
    private static func machine(maxHeaderBytes: Int = 16_384) -> Machine {
        Machine(limits: .init(requestTimeout: .seconds(10), idleTimeout: .seconds(60), maxHeaderBytes: maxHeaderBytes))
    }

    /// A machine that was accepted at 0 and answered `GET /first` at 1 s (keep-alive).
    private static func afterOneResponse() -> Machine {
        var m = machine()
        _ = m.start(now: at(0))
        _ = m.bytesReceived(bytes("GET /first HTTP/1.1\r\nHost: h\r\n\r\n"), now: at(1))
        _ = m.responseReady(ok("first"), now: at(1))
        _ = m.writeCompleted(now: at(1))
        return m
    }

    @Test func theFirstHeadIsDueWithinTheRequestTimeoutOfAccept() throws {
        var m = Self.machine()
        #expect(m.start(now: at(5)).timer == .seconds(10))
        let partial = m.bytesReceived(bytes("GET / HTTP/1.1\r\nHost:"), now: at(14))
        #expect(partial.timer == nil && partial.next.isNone, "bytes of the first request do not move its deadline")
        let fired = m.timerFired(now: at(15))
        let response = try #require(fired.next.written)
        #expect(response.response.status == 408 && !response.keepAlive && response.method == "-")
        #expect(String(decoding: response.response.body, as: UTF8.self).contains("request_timeout"))
        #expect(m.bytesReceived(bytes(" h\r\n\r\n"), now: at(15)).next.isNone, "no request starts behind a 408")
        let done = m.writeCompleted(now: at(15))
        #expect(done.next.closed == false && !done.requestFinished)
    }

    @Test func aLaterHeadIsTimedFromItsFirstByte() {
        var m = Self.afterOneResponse()
        // Idle until 30 s; the first byte of the next request starts its 10 s.
        let firstByte = m.bytesReceived(bytes("G"), now: at(30))
        #expect(firstByte.timer == nil, "the timer set at accept for 10 s is still pending")
        #expect(m.timerFired(now: at(10)).timer == .seconds(30), "it fires early and is moved to 30 s + 10 s (40 s), once")
        #expect(m.bytesReceived(bytes("ET /second HTTP/1.1\r\nHost: h\r\n"), now: at(39)).next.isNone)
        #expect(m.timerFired(now: at(40)).next.written?.response.status == 408)
    }

    @Test func aCompleteHeadBeforeTheDeadlineStartsTheRequestAndStopsTheClock() throws {
        var m = Self.machine()
        _ = m.start(now: at(0))
        let started = m.bytesReceived(bytes("GET /a?x=1 HTTP/1.1\r\nHost: h\r\n\r\n"), now: at(9))
        #expect(try #require(started.next.startedRequest).target == "/a?x=1")
        #expect(m.timerFired(now: at(10)).next.isNone, "no timeout while the handler works")
        #expect(m.timerFired(now: at(100)).next.isNone)
        #expect(m.responseReady(ok("a"), now: at(100)).next.written?.keepAlive == true)
    }

    @Test func anIdleConnectionClosesAfterTheIdleTimeout() {
        var m = Self.afterOneResponse()
        #expect(m.timerFired(now: at(10)).timer == .seconds(51), "the accept-time timer moves to 1 s + 60 s (61 s)")
        #expect(m.timerFired(now: at(61)).next.closed == false)
        #expect(m.bytesReceived(bytes("GET / HTTP/1.1\r\nHost: h\r\n\r\n"), now: at(62)).next.isNone, "closed stays closed")
    }

    /// Keep-alive requests push the deadline later without touching the
    /// Dispatch timer; it fires at the earlier time and is re-armed once.
    @Test func keepAliveRequestsMoveTheDeadlineWithoutReschedulingTheTimer() {
        var m = Self.machine()
        #expect(m.start(now: at(0)).timer == .seconds(10))
        var timerActions = 0
        for i in 1...100 {
            let now = at(Double(i) / 20)
            for actions in [m.bytesReceived(bytes("GET /\(i) HTTP/1.1\r\nHost: h\r\n\r\n"), now: now),
                            m.responseReady(ok("\(i)"), now: now), m.writeCompleted(now: now)] where actions.timer != nil {
                timerActions += 1
            }
        }
        #expect(timerActions == 0)
        #expect(m.timerFired(now: at(10)).timer == .seconds(55), "last response at 5 s + 60 s idle (65 s)")
    }

    @Test func pipelinedRequestsStartOneAtATimeInOrder() throws {
        var m = Self.machine()
        _ = m.start(now: at(0))
        let both = m.bytesReceived(bytes("GET /a HTTP/1.1\r\nHost: h\r\n\r\nPOST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nxyz"), now: at(0))
        #expect(try #require(both.next.startedRequest).path == "/a")
        let answerA = m.responseReady(ok("a"), now: at(0))
        #expect(answerA.next.written?.path == "/a", "/b waits for /a's write")
        let afterA = m.writeCompleted(now: at(0))
        #expect(afterA.requestFinished)
        let b = try #require(afterA.next.startedRequest)
        #expect(b.method == "POST" && b.path == "/b" && b.body == Array("xyz".utf8))
        #expect(m.responseReady(ok("b"), now: at(0)).next.written?.path == "/b")
        #expect(m.writeCompleted(now: at(0)).next.isNone)
    }

    @Test func aSecondAnswerOrAnAnswerBeforeAnyRequestIsIgnored() {
        var m = Self.machine()
        _ = m.start(now: at(0))
        #expect(m.responseReady(ok("early"), now: at(0)).next.isNone)
        _ = m.bytesReceived(bytes("GET /a HTTP/1.1\r\nHost: h\r\n\r\n"), now: at(0))
        #expect(m.responseReady(ok("a"), now: at(0)).next.written != nil)
        #expect(m.responseReady(ok("again"), now: at(0)).next.isNone)
    }

    @Test func headSendsTheHeadersOfTheGetWithoutItsBody() throws {
        var m = Self.machine()
        _ = m.start(now: at(0))
        _ = m.bytesReceived(bytes("HEAD /x HTTP/1.1\r\nHost: h\r\n\r\n"), now: at(0))
        let out = try #require(m.responseReady(ok("0123456789"), now: at(0)).next.written)
        #expect(out.response.omitBody && out.response.body.count == 10 && out.keepAlive && out.method == "HEAD")
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: h\r\n\r\n", true),
        ("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", false),
        ("GET / HTTP/1.0\r\n\r\n", false),
        ("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true),
    ])
    func keepAliveUnlessClosedOrOldHTTP(_ request: String, _ keepAlive: Bool) throws {
        var m = Self.machine()
        _ = m.start(now: at(0))
        _ = m.bytesReceived(bytes(request), now: at(0))
        #expect(try #require(m.responseReady(ok("x"), now: at(0)).next.written).keepAlive == keepAlive)
        let done = m.writeCompleted(now: at(0))
        #expect(done.requestFinished && done.next.closed == (keepAlive ? nil : false))
    }

    @Test func aMalformedRequestIsAnsweredAndTheConnectionCloses() throws {
        var m = Self.machine()
        _ = m.start(now: at(0))
        let out = try #require(m.bytesReceived(bytes("BLAH\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n"), now: at(0)).next.written)
        #expect(out.response.status == 400 && !out.keepAlive && out.path == "-")
        let done = m.writeCompleted(now: at(0))
        #expect(done.next.closed == false && !done.requestFinished)
    }

    @Test func drainClosesAnIdleConnectionAtOnce() {
        var fresh = Self.machine()
        _ = fresh.start(now: at(0))
        #expect(fresh.drain().next.closed == false)
        var kept = Self.afterOneResponse()
        #expect(kept.drain().next.closed == false)
    }

    @Test func drainLetsTheRequestInFlightFinishThenCloses() {
        var m = Self.machine()
        _ = m.start(now: at(0))
        _ = m.bytesReceived(bytes("GET /slow HTTP/1.1\r\nHost: h\r\n\r\n"), now: at(0))
        #expect(m.drain().next.isNone, "the request is answered, not cancelled")
        let out = m.responseReady(ok("slow"), now: at(1)).next.written
        #expect(out?.path == "/slow" && out?.keepAlive == false, "Connection: close")
        let done = m.writeCompleted(now: at(1))
        #expect(done.requestFinished && done.next.closed == false)
    }

    @Test func drainWaitsForARequestWhoseHeadHasBegun() throws {
        var m = Self.machine()
        _ = m.start(now: at(0))
        _ = m.bytesReceived(bytes("GET /late HT"), now: at(0))
        #expect(m.drain().next.isNone)
        #expect(try #require(m.bytesReceived(bytes("TP/1.1\r\nHost: h\r\n\r\n"), now: at(0)).next.startedRequest).path == "/late")
        #expect(m.responseReady(ok("late"), now: at(0)).next.written?.keepAlive == false)
        #expect(m.writeCompleted(now: at(0)).next.closed == false)
    }

    /// Requests pipelined behind the one in flight, fully received before the
    /// drain began, are answered too; the last answer says close.
    @Test func drainAnswersRequestsAlreadyReceived() throws {
        var m = Self.machine()
        _ = m.start(now: at(0))
        _ = m.bytesReceived(bytes("GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\nGET /c"), now: at(0))
        #expect(m.drain().next.isNone)
        #expect(m.responseReady(ok("a"), now: at(0)).next.written?.keepAlive == true, "/b is waiting")
        #expect(try #require(m.writeCompleted(now: at(0)).next.startedRequest).path == "/b")
        #expect(m.responseReady(ok("b"), now: at(0)).next.written?.keepAlive == false, "/c never completed")
        #expect(m.writeCompleted(now: at(0)).next.closed == false)
    }

    @Test func readingPausesWhileARequestIsPendingAndTooMuchIsBuffered() {
        var m = Self.machine(maxHeaderBytes: 1024)
        _ = m.start(now: at(0))
        _ = m.bytesReceived(bytes("GET /a HTTP/1.1\r\nHost: h\r\n\r\n"), now: at(0))
        let request = bytes("GET /p HTTP/1.1\r\nHost: h\r\n\r\n")
        let justUnder = (1024 + 65536) / request.count
        var paused = 0
        for _ in 0..<justUnder where m.bytesReceived(request, now: at(0)).reading == .pause { paused += 1 }
        #expect(paused == 0, "\(justUnder * request.count) bytes buffered behind /a are fine")
        #expect(m.bytesReceived(request, now: at(0)).reading == .pause)
        #expect(m.bytesReceived(request, now: at(0)).reading == nil, "paused once")
        _ = m.responseReady(ok("a"), now: at(0))
        let done = m.writeCompleted(now: at(0))
        #expect(done.reading == .resume && done.next.startedRequest?.path == "/p")
    }

    @Test func readingPausesWhenUnrequestedBytesPileUp() {
        // Only reachable with a head limit above 1 MiB + 64 KiB: the parser
        // refuses a larger head before that.
        var m = Self.machine(maxHeaderBytes: 4 << 20)
        _ = m.start(now: at(0))
        let head = bytes("GET / HTTP/1.1\r\nHost: h\r\nX-Long: ")
        #expect(m.bytesReceived(head, now: at(0)).reading == nil)
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 65536)
        var buffered = head.count
        var pausedAt: [Int] = []
        for _ in 1...40 {
            buffered += chunk.count
            if m.bytesReceived(chunk, now: at(0)).reading == .pause { pausedAt.append(buffered) }
        }
        #expect(pausedAt == [RequestParser.maxBodyBytes + 65536 + head.count], "once, past 1 MiB + 64 KiB")
    }

    @Test func aClientThatLeavesCancelsItsPendingRequest() {
        var handling = Self.machine()
        _ = handling.start(now: at(0))
        _ = handling.bytesReceived(bytes("GET /slow HTTP/1.1\r\nHost: h\r\n\r\n"), now: at(0))
        #expect(handling.peerClosed().next.closed == true)
        #expect(handling.responseReady(ok("late"), now: at(1)).next.isNone, "a late answer is dropped")
        #expect(handling.timerFired(now: at(20)).next.isNone)

        var writing = Self.machine()
        _ = writing.start(now: at(0))
        _ = writing.bytesReceived(bytes("GET /big HTTP/1.1\r\nHost: h\r\n\r\n"), now: at(0))
        _ = writing.responseReady(ok("big"), now: at(0))
        #expect(writing.peerClosed().next.closed == true, "still counted active until written")
        #expect(writing.writeCompleted(now: at(0)).next.isNone)

        var idle = Self.afterOneResponse()
        #expect(idle.peerClosed().next.closed == false)
        #expect(idle.abort().next.isNone, "closing twice does nothing")
    }

    @Test func theLogRecordsTheHandlerTime() {
        var m = Self.machine()
        _ = m.start(now: at(0))
        _ = m.bytesReceived(bytes("GET /t HTTP/1.1\r\nHost: h\r\n\r\n"), now: at(2))
        let out = m.responseReady(ok("t"), now: at(2.25)).next.written!
        #expect(m.roomDecided(.write, for: out).record?.elapsed == .milliseconds(250))
    }
}
