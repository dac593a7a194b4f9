import Testing
@testable import ThumbHTTP
import ThumbTestSupport

private typealias Machine = ConnectionStateMachine<ManualClock>

/// The connection's share of `http.maxPendingResponseBytes` (HTTPServer.md,
/// Slow readers), decided by the state machine on a manual clock: no
/// sockets, no sleeps. The ledger's answers are made up here; what the
/// machine must do with each is the subject: charge, wait, or give way to a
/// `503` and close, and credit the charge back however the response ends.
/// Send timeout 30 s.
@Suite struct ConnectionRoomTests {
    let clock = ManualClock()

    private static func machine() -> Machine {
        Machine(limits: .init(requestTimeout: .seconds(10), idleTimeout: .seconds(60), maxHeaderBytes: 16_384))
    }

    /// Starts `m` on `GET /big` (or `method`) and answers it 5 ms later with
    /// a 1000-byte body: the response handed out to serialize.
    private func answer(_ m: inout Machine, _ method: String = "GET", pipelined: String = "") -> OutgoingResponse {
        _ = m.start(now: clock.now)
        _ = m.bytesReceived(bytes("\(method) /big HTTP/1.1\r\nHost: h\r\n\r\n\(pipelined)"), now: clock.now)
        clock.advance(by: .milliseconds(5))
        let next = m.responseReady(HTTPResponse(status: 200, body: [UInt8](repeating: 1, count: 1000)), now: clock.now).next
        #expect(next.reservesRoom == true, "charged once the driver knows its size")
        return next.written!
    }

    @Test func aResponseIsChargedBeforeItsFirstByteAndCreditedAsTheSocketTakesIt() throws {
        var m = Self.machine()
        let outgoing = answer(&m)
        #expect(m.room == .unreserved)
        let charged = m.roomDecided(.write, for: outgoing)
        #expect(charged.isSend && m.room == .charged)
        let record = try #require(charged.record, "logged and counted once decided")
        #expect(record.status == 200 && record.bodyBytes == 1000 && record.path == "/big" && record.milliseconds == 5)
        #expect(m.writeProgressed(bytes: 600, now: clock.now).room == .credit)
        let done = m.writeCompleted(now: clock.now)
        #expect(done.room == .release && done.requestFinished && done.next.isNone && m.room == .none)
    }

    /// No room to write and none to wait: a small `503` goes instead, is not
    /// charged, and the connection closes after it, cancelling the request
    /// (which so counts finished) and leaving the pipelined one unanswered.
    @Test func aRefusedResponseGivesWayToA503AndTheConnectionCloses() throws {
        var m = Self.machine()
        let outgoing = answer(&m, pipelined: "GET /next HTTP/1.1\r\nHost: h\r\n\r\n")
        let refused = m.roomDecided(.refuse, for: outgoing)
        let noRoom = try #require(refused.refusal, "sent at once: not asked of the budget, it is full")
        #expect(noRoom.response.status == 503 && !noRoom.keepAlive && noRoom.path == "/big" && noRoom.method == "GET")
        // Rendered by the application's hook (plain text by default; ThumbAPI's is JSON with Retry-After).
        #expect(String(decoding: noRoom.response.body, as: UTF8.self) == "overloaded: too many response bytes waiting for slow clients\n")
        #expect(refused.record?.status == 503 && refused.record?.path == "/big", "the 503 is logged, not the dropped answer")
        #expect(m.writeProgressed(bytes: 100, now: clock.now).room == nil, "nothing charged, nothing credited")
        let done = m.writeCompleted(now: clock.now)
        #expect(done.next.closed == true && !done.requestFinished && done.room == nil)
        #expect(m.isClosed)
    }

    @Test func aRefusedHeadRequestGetsA503WithoutABody() throws {
        var m = Self.machine()
        let outgoing = answer(&m, "HEAD")
        let refused = m.roomDecided(.refuse, for: outgoing)
        let noRoom = try #require(refused.refusal)
        #expect(noRoom.response.omitBody && noRoom.method == "HEAD")
        #expect(refused.record?.bodyBytes == 0)
    }

    /// A waiting response is logged at once, starts when the ledger admits it,
    /// and its send timeout counts from then: the wait was not the client's fault.
    @Test func aWaitingResponseStartsWhenAdmittedWithAFreshSendTimeout() throws {
        var m = Self.machine()
        let outgoing = answer(&m)
        let sendDeadline = clock.now + .seconds(30)
        let waiting = m.roomDecided(.wait(evict: [7, 9]), for: outgoing)
        #expect(waiting.isWait && waiting.record?.status == 200 && m.room == .awaiting)
        #expect(m.writeProgressed(bytes: 0, now: clock.now).room == nil)
        clock.advance(by: .seconds(20))
        let admitted = m.admitted(now: clock.now)
        #expect(admitted.next.isSend && m.room == .charged)
        #expect(m.admitted(now: clock.now).next.isNone, "admitted once")
        #expect(m.timerFired(now: sendDeadline).timer == .seconds(20), "moved to 30 s after admission")
        #expect(m.writeProgressed(bytes: 1100, now: clock.now).room == .credit)
        let done = m.writeCompleted(now: clock.now)
        #expect(done.room == .release && done.requestFinished)
    }

    /// However a charged or waiting response ends, the charge goes back:
    /// written (above), the peer gone mid-write, the drain's abort, the send
    /// timeout, eviction (an abort) while it waits.
    @Test(arguments: [Ending.peerClosed, .aborted, .sendTimedOut])
    func aChargeIsReleasedOnEveryEnding(_ ending: Ending) {
        for waiting in [false, true] {
            var m = Self.machine()
            let outgoing = answer(&m)
            _ = m.roomDecided(waiting ? .wait(evict: []) : .write, for: outgoing)
            if !waiting { _ = m.writeProgressed(bytes: 300, now: clock.now) }
            let actions: Machine.Actions
            switch ending {
            case .peerClosed: actions = m.peerClosed()
            case .aborted: actions = m.abort()
            case .sendTimedOut: actions = m.timerFired(now: clock.now + .seconds(30))
            }
            #expect(actions.room == .release, "\(ending), waiting: \(waiting)")
            #expect(actions.next.closed == true && actions.sendTimedOut == (ending == .sendTimedOut))
            #expect(m.room == .none && m.isClosed)
            #expect(m.admitted(now: clock.now).next.isNone && m.abort().room == nil, "released once")
        }
    }

    enum Ending {
        case peerClosed, aborted, sendTimedOut
    }

    @Test func aRefusalWhoseClientLeavesReleasesNothing() {
        var m = Self.machine()
        let outgoing = answer(&m)
        _ = m.roomDecided(.refuse, for: outgoing)
        let gone = m.peerClosed()
        #expect(gone.room == nil && gone.next.closed == true)
    }

    /// `100 Continue` is not a response: never charged, never logged.
    @Test func anInterimContinueIsNotCharged() throws {
        var m = Self.machine()
        _ = m.start(now: clock.now)
        let head = "POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n"
        let asked = m.bytesReceived(bytes(head), now: clock.now)
        let interim = try #require(asked.next.written)
        #expect(interim.isInterim && m.room == .none)
        #expect(asked.next.reservesRoom == false, "sent at once, not charged")
        #expect(m.writeProgressed(bytes: 10, now: clock.now).room == nil)
        let done = m.writeCompleted(now: clock.now)
        #expect(done.room == nil && !done.requestFinished)
        let body = m.bytesReceived(bytes("abc"), now: clock.now)
        #expect(body.next.startedRequest?.body == Array("abc".utf8))
    }

    /// The server's own answers (here a 408) are charged like any response.
    @Test func theServersOwnErrorsAreCharged() throws {
        var m = Self.machine()
        _ = m.start(now: clock.now)
        clock.advance(by: .seconds(10))
        let timeout = try #require(m.timerFired(now: clock.now).next.written)
        #expect(timeout.response.status == 408)
        #expect(m.timerFired(now: clock.now).next.isNone)
        #expect(m.room == .unreserved, "waits for the ledger's answer like any response")
        #expect(m.roomDecided(.write, for: timeout).record?.method == "-")
        let done = m.writeCompleted(now: clock.now)
        #expect(done.room == .release && done.next.closed == false)
    }
}
