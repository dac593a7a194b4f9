extension ConnectionStateMachine {
    typealias Actions = ConnectionActions
    typealias ReadingChange = ThumbHTTP.ReadingChange
    typealias RoomChange = ThumbHTTP.RoomChange
    typealias Next = ConnectionNext
}

// Outside the generic machine: nested, these would be generic too, and
// copied through runtime metadata on every event.
enum ReadingChange: Equatable {
    case pause
    case resume
}

enum RoomChange: Equatable {
    /// The socket took the bytes `writeProgressed` reported, of the charged
    /// response: credit them. (No count here: the driver has it in hand, and
    /// a payload would push `Actions` past 128 bytes.)
    case credit
    /// The response ended (written, or its connection closed): what is
    /// left of its charge goes back, and a waiting one leaves the line.
    case release
}

enum ConnectionNext {
    case none
    /// Hand the request to the handler; its answer comes back as `responseReady`.
    case startRequest(HTTPRequest)
    /// Serialize this response. `reserveRoom`: then ask the pending-bytes
    /// budget for room for its bytes and report the answer with
    /// `roomDecided`; otherwise send it at once (as `.send`).
    case write(OutgoingResponse, reserveRoom: Bool)
    /// Frame the parts of the streamed body queued so far (with its end
    /// when `last`) as the next piece to write, then ask the pending-bytes
    /// budget for room for it (never refused: it waits) and report the
    /// answer with `partRoomDecided`.
    case writePart(last: Bool)
    /// Write the serialized response: `writeProgressed` as the socket takes
    /// some, `writeCompleted` once it took it all.
    case send
    /// The client ended its input while its request is with the handler:
    /// send a bare `100 Continue` now, to learn whether it is still there
    /// (`inputEnded`). Not a response: nothing is charged or recorded.
    case probePeer
    /// Close the socket and cancel the timer. `cancelRequest`: a request is
    /// still pending, so tell its handler (`Responder.cancel()`) and count
    /// it finished.
    case close(cancelRequest: Bool)
}

/// What the driver does after an event, in this order: schedule the
/// timer, pause or resume reading, count a finished request, change the
/// budget, then `next`.
/// Returned by value: no allocation per event.
///
/// Kept within 128 bytes (`next` first, the small fields packed after it):
/// it is returned and copied on every event, and anything larger is copied
/// with a call to memcpy.
struct ConnectionActions {
    var next = ConnectionNext.none
    /// Schedule the connection's one timer to fire this long after the
    /// event's `now`, replacing the pending one. (A delay, not an instant:
    /// so no clock type is in here, and the actions, copied on every event,
    /// have a layout known at compile time.)
    var timer: Duration?
    var reading: ReadingChange?
    /// A request's response was fully written: it no longer counts as active.
    var requestFinished = false
    /// The connection closes because the client took nothing for `sendTimeout`.
    var sendTimedOut = false
    /// Credit or release this connection's charge in the pending-bytes budget.
    var room: RoomChange?

    init(timer: Duration? = nil, reading: ReadingChange? = nil, requestFinished: Bool = false,
         next: ConnectionNext = .none) {
        self.timer = timer
        self.reading = reading
        self.requestFinished = requestFinished
        self.next = next
    }
}
