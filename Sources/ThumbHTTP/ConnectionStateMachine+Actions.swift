extension ConnectionStateMachine {
    /// What the driver does after an event, in this order: schedule the
    /// timer, pause or resume reading, count a finished request, change the
    /// budget, record a response, then `next`.
    /// Returned by value: no allocation per event.
    struct Actions {
        /// Schedule the connection's one timer to fire at this instant,
        /// replacing the pending one.
        var timer: Instant?
        var reading: ReadingChange?
        /// A request's response was fully written: it no longer counts as active.
        var requestFinished = false
        /// The connection closes because the client took nothing for `sendTimeout`.
        var sendTimedOut = false
        /// Credit or release this connection's charge in the pending-bytes budget.
        var room: RoomChange?
        /// A response was decided (written now, waiting, or the `503` for want
        /// of room): log and count it, once.
        var record: ResponseRecord?
        var next = Next.none

        init(timer: Instant? = nil, reading: ReadingChange? = nil, requestFinished: Bool = false,
             record: ResponseRecord? = nil, next: Next = .none) {
            self.timer = timer
            self.reading = reading
            self.requestFinished = requestFinished
            self.record = record
            self.next = next
        }
    }

    enum ReadingChange: Equatable {
        case pause
        case resume
    }

    enum RoomChange: Equatable {
        /// The socket took this many bytes of the charged response.
        case credit(Int)
        /// The response ended (written, or its connection closed): what is
        /// left of its charge goes back, and a waiting one leaves the line.
        case release
    }

    enum Next {
        case none
        /// Hand the request to the handler; its answer comes back as `responseReady`.
        case startRequest(HTTPRequest)
        /// Serialize this response; report its size with `responseSerialized`.
        case write(OutgoingResponse)
        /// Ask the pending-bytes budget for `bytes` of room for this response;
        /// report the answer with `roomDecided`.
        case reserveRoom(OutgoingResponse, bytes: Int)
        /// Write the serialized response: `writeProgressed` as the socket takes
        /// some, `writeCompleted` once it took it all.
        case send
        /// Close the socket and cancel the timer. `cancelRequest`: a request is
        /// still pending, so tell its handler (`Responder.cancel()`) and count
        /// it finished.
        case close(cancelRequest: Bool)
    }
}
