/// The response being written and the server's pending-bytes budget
/// (`http.maxPendingResponseBytes`, HTTPServer.md, Slow readers). The
/// machine decides when a response is charged, waits, is refused or is
/// credited back; the driver asks the shared ledger and reports its answer.
///
/// One response's path: `.write(reserveRoom: true)` (serialize it, ask the
/// ledger for its size) → `roomDecided`: `.write` charges it and says
/// `.send`; `.wait` leaves it waiting until `admitted`; `.refuse` hands out a
/// small `503` to send in its place at once, not charged, and the
/// connection closes after it. Each answer says what to record (log and
/// count) of the response, once. Whichever way a charged or waiting response ends
/// (written, aborted, the peer gone mid-write) the actions say `.release`.
extension ConnectionStateMachine {
    typealias Room = ResponseRoom

    /// The ledger's answer for the response `.write` handed out. Its own
    /// small result rather than `Actions`: it comes once per response, on
    /// the hot path, and never needs the timer or reading.
    mutating func roomDecided(_ decision: RoomDecision, for outgoing: OutgoingResponse) -> RoomStep {
        guard case .writing = state, room == .unreserved else { return .none }
        switch decision {
        case .write:
            room = .charged
            return .send(ResponseRecord(outgoing, elapsed: responseElapsed))
        case .wait:
            room = .awaiting
            return .wait(ResponseRecord(outgoing, elapsed: responseElapsed))
        case .refuse:
            // Neither written nor kept: the body goes now, and a small answer
            // tells the client to come back. It is under 300 bytes and bound
            // by the send timeout: not charged, since the budget is full.
            room = .refused
            var refusal = renderError(.noRoomForResponse)
            refusal.omitBody = outgoing.response.omitBody
            let sent = OutgoingResponse(response: refusal, keepAlive: false, method: outgoing.method, path: outgoing.path)
            return .sendRefusal(sent, ResponseRecord(sent, elapsed: responseElapsed))
        }
    }

    /// The ledger charged the waiting response: it starts now, and its send
    /// timeout starts again (the wait was no fault of the client's).
    mutating func admitted(now: Instant) -> Actions {
        guard case .writing = state, room == .awaiting else { return Actions() }
        room = .charged
        var actions = writeProgressed(bytes: 0, now: now)
        actions.next = .send
        return actions
    }
}

/// Where a connection's response stands in the pending-bytes budget
/// (outside the generic machine, so it is not generic itself).
enum ResponseRoom: Equatable {
    /// Nothing is charged: no response is being written, or `100 Continue` is.
    case none
    /// A response waits for the ledger's answer (`roomDecided`).
    case unreserved
    /// Charged in full; credited as the socket takes it, released when it ends.
    case charged
    /// In the ledger's line, its body in memory; `admitted` starts it.
    case awaiting
    /// No room: a `503` goes in its place, uncharged, then the connection closes.
    case refused
}

/// What the driver does with the ledger's answer (`roomDecided`).
enum RoomStep {
    /// Charged: record the response, then send it.
    case send(ResponseRecord)
    /// In line for room: record the response now; `admitted` starts it.
    case wait(ResponseRecord)
    /// No room: record this `503`, serialize it and send it in place of the
    /// response; the connection closes once it is written. Indirect (boxed
    /// on this rare path) so the step stays small to return on every response.
    indirect case sendRefusal(OutgoingResponse, ResponseRecord)
    /// The answer found no response waiting for it (the connection closed).
    case none
}

extension ResponseRecord {
    /// What the access log and the status counts record of a response, as it
    /// goes on the wire (no body bytes for HEAD and 304).
    init(_ outgoing: OutgoingResponse, elapsed: Duration) {
        let response = outgoing.response
        self.init(method: outgoing.method, path: outgoing.path, status: response.status,
                  bodyBytes: response.omitBody || response.status == 304 ? 0 : response.body.count,
                  elapsed: elapsed, cache: response.header("X-Cache"))
    }
}
