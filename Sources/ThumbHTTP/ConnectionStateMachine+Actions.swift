extension ConnectionStateMachine {
    /// What the driver does after an event, in this order: schedule the
    /// timer, pause or resume reading, count a finished request, then `next`.
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
        var next = Next.none

        init(timer: Instant? = nil, reading: ReadingChange? = nil, requestFinished: Bool = false, next: Next = .none) {
            self.timer = timer
            self.reading = reading
            self.requestFinished = requestFinished
            self.next = next
        }
    }

    enum ReadingChange: Equatable {
        case pause
        case resume
    }

    enum Next {
        case none
        /// Hand the request to the handler; its answer comes back as `responseReady`.
        case startRequest(HTTPRequest)
        /// Write this response; report `writeCompleted` once the socket took it all.
        case write(OutgoingResponse)
        /// Close the socket and cancel the timer. `cancelRequest`: a request is
        /// still pending, so tell its handler (`Responder.cancel()`) and count
        /// it finished.
        case close(cancelRequest: Bool)
    }

    /// A response to serialize and write, with what the access log records.
    struct OutgoingResponse {
        /// For HEAD, `omitBody` is set.
        var response: HTTPResponse
        /// `Connection: keep-alive` rather than `close`.
        var keepAlive: Bool
        /// `-` for the server's own errors.
        var method: String
        var path: String
        /// Nanoseconds since the request was handed to the handler (0 for the server's own errors).
        var elapsed: UInt64
        /// `100 Continue`: a bare status line, not a response (not logged or counted).
        var isInterim = false

        init(response: HTTPResponse, keepAlive: Bool, method: String, path: String, elapsed: UInt64) {
            self.response = response
            self.keepAlive = keepAlive
            self.method = method
            self.path = path
            self.elapsed = elapsed
        }

        /// The interim answer to `Expect: 100-continue`.
        static var `continue`: OutgoingResponse {
            var interim = OutgoingResponse(response: HTTPResponse(status: 100), keepAlive: true, method: "-", path: "-", elapsed: 0)
            interim.isInterim = true
            return interim
        }

        /// The server's own error answer, rendered; the connection closes after it.
        init(error: HTTPResponse) {
            self.init(response: error, keepAlive: false, method: "-", path: "-", elapsed: 0)
        }
    }
}
