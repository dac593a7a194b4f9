/// The response being written and the server's pending-bytes budget
/// (`http.maxPendingResponseBytes`, HTTPServer.md, Slow readers). The
/// machine decides when a response is charged, waits, is refused or is
/// credited back; the driver asks the shared ledger and reports its answer.
///
/// One response's path: `.write` (serialize it) → `responseSerialized` →
/// `.reserveRoom` (ask the ledger) → `roomDecided`: `.write` charges it and
/// says `.send`; `.wait` leaves it waiting until `admitted`; `.refuse` hands
/// out a small `503` to write in its place, not charged, and the connection
/// closes after it. Whichever way a charged or waiting response ends
/// (written, aborted, the peer gone mid-write) the actions say `.release`.
extension ConnectionStateMachine {
    enum Room: Equatable {
        /// Nothing is charged: no response is being written, or `100 Continue` is.
        case none
        /// A response waits for its size (`responseSerialized`), then for the
        /// ledger's answer (`roomDecided`).
        case unreserved
        /// Charged in full; credited as the socket takes it, released when it ends.
        case charged
        /// In the ledger's line, its body in memory; `admitted` starts it.
        case awaiting
        /// No room: a `503` goes in its place, uncharged, then the connection closes.
        case refused
    }

    /// The driver serialized the response `.write` handed out: `bytes` of head and body.
    mutating func responseSerialized(_ outgoing: OutgoingResponse, bytes: Int) -> Actions {
        guard case .writing = state else { return Actions() }
        switch room {
        case .none: return Actions(next: .send)
        case .unreserved: return Actions(next: .reserveRoom(outgoing, bytes: bytes))
        case .refused:
            // The refusal is under 300 bytes and bound by the send timeout: not
            // charged, since the budget is full.
            return Actions(record: ResponseRecord(outgoing), next: .send)
        case .charged, .awaiting: return Actions()
        }
    }

    /// The ledger's answer for the response of `.reserveRoom`.
    mutating func roomDecided(_ decision: RoomDecision, for outgoing: OutgoingResponse) -> Actions {
        guard case .writing = state, room == .unreserved else { return Actions() }
        switch decision {
        case .write:
            room = .charged
            return Actions(record: ResponseRecord(outgoing), next: .send)
        case .wait:
            room = .awaiting
            return Actions(record: ResponseRecord(outgoing))
        case .refuse:
            // Neither written nor kept: the body goes now, and a small answer
            // tells the client to come back.
            room = .refused
            var refusal = renderError(.noRoomForResponse)
            refusal.omitBody = outgoing.response.omitBody
            return Actions(next: .write(OutgoingResponse(response: refusal, keepAlive: false, method: outgoing.method,
                                                         path: outgoing.path, elapsed: outgoing.elapsed)))
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

extension ResponseRecord {
    /// What the access log and the status counts record of a response, as it
    /// goes on the wire (no body bytes for HEAD and 304).
    init(_ outgoing: OutgoingResponse) {
        let response = outgoing.response
        self.init(method: outgoing.method, path: outgoing.path, status: response.status,
                  bodyBytes: response.omitBody || response.status == 304 ? 0 : response.body.count,
                  milliseconds: outgoing.elapsed / .milliseconds(1), cache: response.header("X-Cache"))
    }
}
