/// A streamed response (HTTPServer.md, Streamed responses): its head goes out
/// as any response does; then each piece — the parts queued meanwhile, framed
/// together — is charged to the pending-bytes budget, written, and credited,
/// one at a time. Between pieces no send timeout runs and nothing else is
/// written; once the application ends the body and the last piece is out,
/// the response completes as a whole one would.
extension ConnectionStateMachine {
    /// The application queued a part (the driver holds its bytes).
    mutating func partQueued(now: Instant) -> Actions {
        guard case .writing = state, var s = stream, !s.lastOut else { return Actions() }
        s.queued = true
        stream = s
        var actions = Actions()
        if !s.pieceOut { startPiece(now: now, &actions) }
        return actions
    }

    /// The application ended the body: once what is queued is out, its end goes.
    mutating func streamEnded(now: Instant) -> Actions {
        guard case .writing = state, var s = stream, !s.ended else { return Actions() }
        s.ended = true
        stream = s
        var actions = Actions()
        if !s.pieceOut { startPiece(now: now, &actions) }
        return actions
    }

    /// The ledger's answer for the piece `.writePart` handed out: true to
    /// write it now; false while it waits (`admitted` starts it, under the
    /// send timeout armed when it was handed out). Never refused: a stream
    /// already begun cannot be answered `503`.
    mutating func partRoomDecided(_ decision: RoomDecision) -> Bool {
        guard case .writing = state, stream != nil, room == .unreserved else { return false }
        switch decision {
        case .write:
            room = .charged
            return true
        case .wait, .refuse:
            room = .awaiting
            return false
        }
    }

    /// A piece that is not the body's end was written (the head, or parts):
    /// its charge goes back, and the next piece starts if parts are queued.
    /// Nil when the written piece was the last: the response is complete.
    mutating func streamPieceWritten(now: Instant) -> Actions? {
        guard var s = stream, !s.lastOut else {
            stream = nil
            return nil
        }
        var actions = Actions()
        if room == .charged { actions.room = .release }
        room = .none
        s.pieceOut = false
        stream = s
        if s.queued || s.ended {
            startPiece(now: now, &actions)
        } else {
            // Waiting for the application is not the client's delay.
            deadline = nil
        }
        return actions
    }

    private mutating func startPiece(now: Instant, _ actions: inout Actions) {
        guard var s = stream else { return }
        s.pieceOut = true
        s.queued = false
        s.lastOut = s.ended
        stream = s
        room = .unreserved
        armDeadline(.send, now: now)
        actions.timer = timerToSchedule(now: now)
        actions.next = .writePart(last: s.lastOut)
    }
}

/// Where a streamed body stands (outside the generic machine, so it is not generic itself).
struct StreamProgress: Equatable {
    /// Chunks for HTTP/1.1, bare bytes for HTTP/1.0.
    var framing: BodyFraming
    /// A piece (the head first) is being charged or written.
    var pieceOut = true
    /// Parts wait in the driver for the next piece.
    var queued = false
    /// The application ended the body.
    var ended = false
    /// The piece out carries the body's end: its write completes the response.
    var lastOut = false

    init(framing: BodyFraming) {
        self.framing = framing
    }
}
