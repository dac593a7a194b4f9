/// The life of one HTTP/1.1 connection, without I/O: bytes, timer firings,
/// responses, the pending-bytes budget's answers and finished writes go in,
/// with the time read by the caller, and what to do comes out as `Actions`.
/// No socket, no Dispatch, no clock reading here: `Connection` performs the
/// actions, and tests drive the machine on a manual clock (Errors.md
/// for 408, HTTPServer.md for keep-alive, pipelining, `Expect`, timeouts and
/// slow readers, ServiceLife.md for the drain).
///
/// Generic over the clock, as Hummingbird's connection state machine is:
/// the server runs it on `MonotonicClock` (`ContinuousClock` time; specialized within this module,
/// no indirect call per event), tests on a manual one.
struct ConnectionStateMachine<C: Clock> where C.Duration == Duration {
    typealias Instant = C.Instant
    typealias Limits = ConnectionLimits
    // The types the machine's values are made of live outside it: nested in
    // a generic type they would be generic too, and copied and destroyed
    // through runtime metadata on every event.
    typealias State = ConnectionState
    typealias Flight = ConnectionState.Flight

    private(set) var state = State.reading
    /// `state` is `.closed`: kept apart, so the driver asks without copying
    /// the state and its request.
    private(set) var isClosed = false
    /// When the handler got the request in flight (for the access log).
    private var requestStartedAt: Instant?
    /// The handler's time for the response being written (zero for the
    /// server's own answers), recorded with it.
    private(set) var responseElapsed = Duration.zero
    /// Where the response being written stands in the pending-bytes budget;
    /// `.none` unless `state` is `.writing`. Set only by the events here and
    /// in ConnectionStateMachine+Room.swift.
    var room = Room.none
    /// The streamed body of the response being written; nil when the response
    /// is whole. Set by the events in ConnectionStateMachine+Stream.swift,
    /// `responseReady` and `close`.
    var stream: StreamProgress?
    private var limits: Limits
    private var parser: RequestParser
    /// Set by the events in ConnectionStateMachine+Ending.swift only.
    var draining = false
    /// The client sent end of stream: what it asked in full is still
    /// answered, then the connection closes (`inputEnded`). Set by
    /// `inputEnded` only.
    var receivedEndOfStream = false
    /// Draining, or the client's input ended: the connection closes once
    /// nothing fully received is left to answer.
    private var closesWhenAnswered: Bool { draining || receivedEndOfStream }
    /// Back-pressure: the driver stops reading while this holds.
    private(set) var readingPaused = false
    /// While draining: the next request, parsed ahead to learn whether the
    /// response being sent may keep the connection open for it.
    private var lookahead: RequestParser.Event?

    /// When the connection times out (nil: no timeout runs), and what for.
    var deadline: Instant?
    private var deadlineKind = ConnectionDeadline.head
    /// When the driver's timer is due (nil: not scheduled); see `timerToSchedule(now:)`.
    private var timerFiresAt: Instant?
    /// The application's look at a head that expects `100 Continue`: a
    /// response refuses it before its body is sent (HTTPServer.md).
    private let screenHead: (HTTPRequest) -> HTTPResponse?
    /// The application's rendering of the errors this machine answers itself.
    let renderError: (HTTPError) -> HTTPResponse

    init(limits: Limits, screenHead: @escaping (HTTPRequest) -> HTTPResponse? = { _ in nil },
         renderError: @escaping (HTTPError) -> HTTPResponse = HTTPError.plainText) {
        self.renderError = renderError
        self.limits = limits
        self.screenHead = screenHead
        parser = RequestParser(maxHeaderBytes: limits.maxHeaderBytes)
    }

    /// New timeouts and back-pressure threshold apply from the next request;
    /// the head-size limit of this connection's parser stays.
    mutating func update(_ limits: Limits) {
        self.limits = limits
    }

    /// The connection was accepted: the first request's head is due within
    /// the request timeout.
    mutating func start(now: Instant) -> Actions {
        armDeadline(.head, now: now)
        return Actions(timer: timerToSchedule(now: now))
    }

    /// Bytes arrived from the client.
    mutating func bytesReceived<Bytes: Collection<UInt8>>(_ bytes: Bytes, now: Instant) -> Actions {
        if case .closed = state { return Actions() }
        var actions = Actions()
        let wasBetweenRequests = !hasPartialRequest
        parser.append(bytes)
        if case .reading = state {
            // Later requests: the head timeout counts from their first byte (Errors.md, 408).
            if wasBetweenRequests && deadlineKind != .head { armDeadline(.head, now: now) }
            processNext(now: now, &actions)
        }
        if case .reading = state {} else if parser.bufferedBytes > limits.maxHeaderBytes + 65536 {
            // While a response is pending, keep reading (so a client that leaves
            // is noticed and its work cancelled) but buffer at most one more
            // request head's worth.
            pauseReading(&actions)
        }
        actions.timer = timerToSchedule(now: now)
        return actions
    }

    /// The handler answered the request in flight. `streamed`: only the head
    /// is here; its body follows in parts (`partQueued`, `streamEnded`).
    mutating func responseReady(_ response: HTTPResponse, now: Instant, streamed: Bool = false) -> Actions {
        guard case .handling(let flight) = state else { return Actions() }
        var response = response
        if flight.method == "HEAD" { response.omitBody = true }
        var keepAlive = flight.keepAlive
        var framing = BodyFraming.length
        if streamed {
            response.body = []
            // HTTP/1.0 has no chunks: the body ends with the connection.
            framing = flight.takesInterim ? .chunked : .close
            if framing == .close { keepAlive = false }
            // A HEAD gets the head alone: no part follows it.
            stream = response.omitBody ? nil : StreamProgress(framing: framing)
        }
        if closesWhenAnswered && keepAlive {
            // A draining connection, or one whose client ended its input,
            // closes once nothing fully received is left to answer: it stays
            // open only for a request already here.
            if lookahead == nil { lookahead = parser.next() }
            if case .request? = lookahead {} else { keepAlive = false }
        }
        state = .writing(flight, closeAfter: !keepAlive)
        armDeadline(.send, now: now)
        let elapsed = requestStartedAt.map { max(.zero, $0.duration(to: now)) } ?? .zero
        var actions = Actions(timer: timerToSchedule(now: now))
        var outgoing = OutgoingResponse(response: response, keepAlive: keepAlive, method: flight.method, path: flight.path)
        outgoing.framing = framing
        write(outgoing, elapsed: elapsed, &actions)
        return actions
    }

    /// The socket took `bytes` more of the response (not all of it), or the
    /// response may start now after waiting for room in the pending-bytes
    /// budget: the send timeout starts again. Only moves the deadline (see
    /// `timerToSchedule`); a charged response is credited what the socket took.
    mutating func writeProgressed(bytes: Int, now: Instant) -> Actions {
        guard case .writing = state else { return Actions() }
        var actions = Actions()
        if room == .charged && bytes > 0 { actions.room = .credit }
        if deadline != nil && deadlineKind == .send {
            armDeadline(.send, now: now)
            actions.timer = timerToSchedule(now: now)
        }
        return actions
    }

    /// The socket took the whole response.
    mutating func writeCompleted(now: Instant) -> Actions {
        guard case .writing(let flight, let closeAfter) = state else { return Actions() }
        if stream != nil, room != .refused, let actions = streamPieceWritten(now: now) { return actions }
        let finished = room
        room = .none
        var actions = Actions(requestFinished: flight != nil)
        if finished == .charged { actions.room = .release }
        if finished == .refused {
            // The `503` for want of room is out: the connection closes whatever
            // the request asked. The client is told to retry, and pipelined
            // requests behind it would only find the budget as full. The
            // request counts finished through the close, which cancels it.
            actions.requestFinished = false
            close(&actions)
            return actions
        }
        state = .reading
        if closeAfter {
            close(&actions)
            return actions
        }
        if readingPaused {
            readingPaused = false
            actions.reading = .resume
        }
        if flight == nil {
            // `100 Continue` went out: the head's deadline, still armed, now
            // covers the body (sending the 100 does not give the client more time).
            processNext(now: now, &actions)
            if receivedEndOfStream, case .reading = state {
                close(&actions)   // the body did not come before the client's end of stream
                return actions
            }
            actions.timer = timerToSchedule(now: now)
            return actions
        }
        armDeadline(hasPartialRequest ? .head : .idle, now: now)
        processNext(now: now, &actions)
        if closesWhenAnswered, case .reading = state {
            close(&actions)   // nothing complete left to answer: idle, so it goes
            return actions
        }
        actions.timer = timerToSchedule(now: now)
        return actions
    }

    /// The driver's timer fired. It may fire early (the deadline moved on
    /// since it was scheduled): then it is scheduled again, once.
    mutating func timerFired(now: Instant) -> Actions {
        timerFiresAt = nil
        guard let deadline else { return Actions() }
        if now < deadline { return Actions(timer: timerToSchedule(now: now)) }
        self.deadline = nil
        var actions = Actions()
        switch (deadlineKind, state) {
        case (.head, .reading):
            state = .writing(nil, closeAfter: true)
            armDeadline(.send, now: now)
            actions.timer = timerToSchedule(now: now)
            write(OutgoingResponse(error: renderError(.requestTimeout)), &actions)
        case (.send, _):
            actions.sendTimedOut = true
            close(&actions)
        default:
            // Idle, or the body's deadline passed while `100 Continue` was
            // still being written: nothing more can be sent, so close.
            close(&actions)
        }
        return actions
    }

    var hasPartialRequest: Bool { parser.hasPartialRequest || lookahead != nil }

    /// Starts the next request, or answers the parser's error, if one is complete.
    private mutating func processNext(now: Instant, _ actions: inout Actions) {
        let event: RequestParser.Event?
        if let parsedAhead = lookahead {
            lookahead = nil
            event = parsedAhead
        } else {
            event = parser.next()
        }
        switch event {
        case nil:
            // Stop reading if the client sends more than a request's worth of
            // bytes nobody asked for yet (back-pressure for pipelining).
            if parser.bufferedBytes > RequestParser.maxBodyBytes + 65536 { pauseReading(&actions) }
        case .error(let error)?:
            armDeadline(.send, now: now)
            state = .writing(nil, closeAfter: true)
            write(OutgoingResponse(error: renderError(error)), &actions)
        case .continueExpected(let head)?:
            if let refusal = screenHead(head) {
                // The final status at once; the body may follow anyway, so the
                // connection closes after it (lingering, so the answer survives).
                armDeadline(.send, now: now)
                state = .writing(nil, closeAfter: true)
                write(OutgoingResponse(response: refusal, keepAlive: false, method: head.method, path: head.path),
                      &actions)
            } else {
                state = .writing(nil, closeAfter: false)
                write(.continue, &actions)
            }
        case .request(let request)?:
            deadline = nil
            state = .handling(Flight(method: request.method, path: request.path, keepAlive: request.keepAlive,
                                     takesInterim: request.minorVersion >= 1))
            requestStartedAt = now
            actions.next = .startRequest(request)
        }
    }

    private mutating func pauseReading(_ actions: inout Actions) {
        guard !readingPaused else { return }
        readingPaused = true
        actions.reading = .pause
    }

    mutating func close(_ actions: inout Actions) {
        let pending: Bool
        switch state {
        case .closed: return
        case .reading: pending = false
        case .handling: pending = true
        case .writing(let flight, _): pending = flight != nil
        }
        state = .closed
        isClosed = true
        stream = nil
        deadline = nil
        lookahead = nil
        // Credited back whichever way the response ends: the driver releases
        // before it closes the socket.
        if room == .charged || room == .awaiting { actions.room = .release }
        room = .none
        actions.reading = nil
        actions.timer = nil
        actions.next = .close(cancelRequest: pending)
    }

    /// Hands `outgoing` to the driver to serialize. A response is charged to
    /// the pending-bytes budget once its size is known (the driver asks and
    /// reports `roomDecided`); `100 Continue` (25 bytes between a head and its
    /// body) is not a response: it is not charged and goes at once.
    mutating func write(_ outgoing: OutgoingResponse, elapsed: Duration = .zero, _ actions: inout Actions) {
        room = outgoing.isInterim ? .none : .unreserved
        responseElapsed = elapsed
        actions.next = .write(outgoing, reserveRoom: !outgoing.isInterim)
    }

    mutating func armDeadline(_ kind: ConnectionDeadline, now: Instant) {
        deadlineKind = kind
        switch kind {
        case .head: deadline = now.advanced(by: limits.requestTimeout)
        case .idle: deadline = now.advanced(by: limits.idleTimeout)
        case .send: deadline = now.advanced(by: limits.sendTimeout)
        }
    }

    /// One timer per connection, moved lazily. Re-scheduling a Dispatch timer
    /// wakes Dispatch's manager thread (an eventfd write and a context switch),
    /// which cost about a fifth of keep-alive throughput when done per request.
    /// So a later deadline only moves `deadline`; the timer fires at the earlier
    /// time, finds the deadline moved, and is scheduled again once
    /// (`timerFired`). Only an earlier deadline, or none scheduled, schedules
    /// at once. Invariant: the timer fires no later than `deadline`.
    /// Returned as the time from `now` to the deadline: what the driver's
    /// timer takes, and a plain `Duration` keeps `Actions` free of the clock.
    mutating func timerToSchedule(now: Instant) -> Duration? {
        guard let deadline else { return nil }
        if let firesAt = timerFiresAt, firesAt <= deadline { return nil }
        timerFiresAt = deadline
        return now.duration(to: deadline)
    }
}

/// What happens when a connection's deadline passes.
enum ConnectionDeadline {
    /// The head (or an announced body) did not arrive: 408.
    case head
    /// No next request on a kept-alive connection: close.
    case idle
    /// The client took nothing of the response for `sendTimeout`: close.
    case send
}
