@preconcurrency import Dispatch
import Glibc
import ThumbClock

/// One client connection: its socket (registered with its I/O queue's
/// `Poller`), its timer, and the response being written.
/// `ConnectionStateMachine` decides what happens; this class reads, writes
/// and performs the actions it returns. Everything runs on `queue`.
///
/// The socket is edge-triggered: an event says something changed, once. So
/// reading goes on until EAGAIN (or a short read, after which new bytes
/// raise a new edge), reading that resumes after a pause tries at once (the
/// edge may have come and gone while paused), and a write that hit EAGAIN
/// waits for the next writable edge.
final class Connection: @unchecked Sendable {
    /// The machine on the production clock, named concretely: it specializes
    /// within this module, and reading the time is a vDSO call, not a call
    /// through a protocol witness, per event. Its deadlines become
    /// `DispatchTime` only when the one timer is scheduled.
    typealias Machine = ConnectionStateMachine<ContinuousClock>

    let id: Int
    let fd: Int32
    let io: IOQueue
    var queue: DispatchQueue { io.queue }
    /// Strong, not `unowned`: a block of this connection's queue may run after
    /// a stopped server let go of it, and must then find the server alive
    /// rather than trap. The cycle (server → its open connections → server)
    /// ends when the connection closes and the server drops it.
    private let server: HTTPServer
    private var machine: Machine
    private var timer: DispatchSourceTimer?
    // What the socket and the poller are up to: I/O bookkeeping the machine
    // has no say in (it never sees edges or reads). Whether reading is paused,
    // whether the connection is closed and where the response stands in the
    // pending-bytes budget are the machine's (`readingPaused`, `isClosed`,
    // `room`), asked rather than mirrored here.
    /// The socket may hold bytes (or end of stream) not read yet: a readable
    /// edge came, or the last read filled the buffer. False after EAGAIN or
    /// a short read; the next bytes to arrive raise a new edge.
    private var readReady = false
    /// The peer shut down or the socket failed: a short read does not mean
    /// the socket is drained, end of stream still waits to be read.
    private var peerHungUp = false
    /// Inside `readAvailable`'s loop: a nested resume leaves the reading to it.
    private var reading = false
    /// Registered with the poller: a drain may read the socket.
    private var started = false
    /// The answer channel of the request in flight, until its response is written.
    private var responder: Responder?
    /// The response being written: its head, its body (shared with the
    /// handler's array, not copied) and how much of both the socket took.
    /// `head` keeps its capacity between responses: serialized into again,
    /// not allocated per response.
    private var head: [UInt8] = []
    private var body: [UInt8] = []
    private var written = 0

    init(id: Int, fd: Int32, io: IOQueue, server: HTTPServer, limits: ConnectionLimits,
         screenHead: @escaping (HTTPRequest) -> HTTPResponse?, renderError: @escaping HTTPError.Renderer) {
        self.id = id
        self.fd = fd
        self.io = io
        self.server = server
        machine = Machine(limits: limits, screenHead: screenHead, renderError: renderError)
    }

    static func now() -> ContinuousClock.Instant { .now }

    func start() {
        // A drain that reached the connection before its start closed it already.
        guard !machine.isClosed else { return }
        started = true
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        perform(machine.start(now: Self.now()))
        // Registering reports what is already readable as an edge, so the
        // request that came with the connection is not missed.
        if !io.poller.add(self) { perform(machine.abort()) }
    }

    /// The poller's report for this socket: what became ready since the last.
    func ready(readable: Bool, writable: Bool, hangUp: Bool) {
        if writable { flush() }
        guard !machine.isClosed else { return }
        if hangUp { peerHungUp = true }
        if readable {
            readReady = true
            readAvailable()
        }
    }

    /// Idle connections close at once on drain; busy ones after their
    /// response. What the client sent before the drain began counts: bytes
    /// already in the socket are read first, so a request that arrived just
    /// before is answered rather than dropped with the idle connection.
    func beginDrain() {
        guard started, !machine.isClosed, !machine.readingPaused else { return perform(machine.drain()) }
        let result: IOResult
        do {
            result = try io.readBuffer.withUnsafeMutableBytes { try Socket.read(fd, into: $0) }
        } catch {
            return perform(machine.peerClosed())
        }
        switch result {
        case .wouldBlock: perform(machine.drain())
        case .processed(0): perform(machine.peerClosed())
        case .processed(let n): perform(machine.drain(received: io.readBuffer[0..<n], now: Self.now()))
        }
    }

    /// The drain deadline passed: close whatever is still going on.
    func close() { perform(machine.abort()) }

    /// Closed to make room in the pending-bytes budget (its client took nothing for longest).
    func evict() { perform(machine.abort()) }

    /// The pending-bytes budget has room for the waiting response (charged already).
    func admitted() { perform(machine.admitted(now: Self.now())) }

    /// New limits after a reload; they apply from the next request on.
    func update(_ limits: ConnectionLimits) { machine.update(limits) }

    /// Timer first, then reading, then `next`: `next` may run the handler,
    /// which may answer at once and so perform the next actions from inside
    /// this call; those must not be overtaken by stale ones.
    private func perform(_ actions: Machine.Actions) {
        if let due = actions.timer { schedule(at: due) }
        // A pause needs nothing done: the read loop asks the machine.
        let resumed = actions.reading == .resume
        if actions.requestFinished {
            responder = nil
            server.requestFinished()
        }
        if actions.sendTimedOut { server.sendTimedOut() }
        switch actions.room {
        case .credit(let bytes)?: server.written(self, bytes: bytes)
        case .release?: server.releasePending(self)
        case nil: break
        }
        if let record = actions.record { server.responded(record) }
        switch actions.next {
        case .none: break
        case .startRequest(let request): startRequest(request)
        case .write(let outgoing): serialize(outgoing)
        case .reserveRoom(let outgoing, let bytes):
            perform(machine.roomDecided(server.reserve(self, bytes: bytes), for: outgoing))
        case .send: flush()
        case .close(let cancelRequest): closeSocket(cancelRequest: cancelRequest)
        }
        // After `next`, for the reason above. No edge comes for bytes that
        // arrived while reading was paused: read them now.
        if resumed { readAvailable() }
    }

    /// Dispatch's timers run on its own clock: the deadline goes over as
    /// "this long from now". A timer that so fires a little early finds the
    /// deadline not reached and is scheduled again (`timerFired`).
    private func schedule(at due: ContinuousClock.Instant) {
        let deadline = DispatchTime.now() + max(.zero, Self.now().duration(to: due)).dispatchInterval
        if let timer {
            timer.schedule(deadline: deadline)
            return
        }
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: deadline)
        t.setEventHandler { [self] in perform(machine.timerFired(now: Self.now())) }
        timer = t
        t.resume()
    }

    /// Reads while the socket may hold bytes and the state machine wants
    /// them. A client sending without pause gets `maxReadsPerTurn` reads,
    /// then the queue serves the others before this one goes on.
    private func readAvailable() {
        guard !reading else { return }   // the loop up the stack goes on
        reading = true
        defer { reading = false }
        var reads = 0
        while readReady, !machine.readingPaused, !machine.isClosed {
            if reads == Self.maxReadsPerTurn {
                queue.async { self.readAvailable() }
                return
            }
            reads += 1
            let result: IOResult
            do {
                result = try io.readBuffer.withUnsafeMutableBytes { try Socket.read(fd, into: $0) }
            } catch {
                readReady = false
                perform(machine.peerClosed())
                return
            }
            switch result {
            case .wouldBlock:
                readReady = false
            case .processed(0):
                readReady = false
                perform(machine.peerClosed())
            case .processed(let n):
                // A short read emptied the socket: saves the read that would say EAGAIN.
                if n < io.readBuffer.count, !peerHungUp { readReady = false }
                perform(machine.bytesReceived(io.readBuffer[0..<n], now: Self.now()))
            }
        }
    }

    private static let maxReadsPerTurn = 16

    private func startRequest(_ request: HTTPRequest) {
        let responder = Responder(connection: self)
        self.responder = responder
        server.requestStarted()
        server.handler(request, responder)
    }

    /// The handler's answer, from any thread (through `Responder`).
    func responseReady(_ response: HTTPResponse) {
        // A handler answering at once (a cache hit) needs no queue hop.
        if io.isCurrent {
            perform(machine.responseReady(response, now: Self.now()))
        } else {
            queue.async { self.perform(self.machine.responseReady(response, now: Self.now())) }
        }
    }

    /// Serializes the response into `head` and `body` (shared with the
    /// handler's array, not copied); the machine then says whether it is
    /// sent, waits for room in the budget, or gives way to a `503`.
    private func serialize(_ outgoing: OutgoingResponse) {
        written = 0
        head.removeAll(keepingCapacity: true)
        if outgoing.isInterim {
            head.append(contentsOf: ResponseHead.continueBytes)
            body = []
        } else {
            ResponseHead.write(outgoing.response, keepAlive: outgoing.keepAlive, date: server.dates, into: &head)
            body = ResponseHead.body(of: outgoing.response)
        }
        perform(machine.responseSerialized(outgoing, bytes: head.count + body.count))
    }

    /// Writes head and body with one writev per attempt; what the socket does
    /// not take now waits for the next writable edge (no extra copy is buffered).
    private func flush() {
        // A late write event after the response completed or the socket closed,
        // or a response still waiting for room.
        guard !head.isEmpty, machine.room != .awaiting else { return }
        var progressed = 0
        while written < head.count + body.count {
            let result: IOResult
            do {
                result = try writeSome()
            } catch {
                perform(machine.peerClosed())
                return
            }
            guard case .processed(let n) = result else {
                if progressed > 0 { perform(machine.writeProgressed(bytes: progressed, now: Self.now())) }
                return
            }
            written += n
            progressed += n
        }
        finishResponse()
        perform(machine.writeCompleted(now: Self.now()))
    }

    /// Empties `head` (the next `flush` is a late event, not a response),
    /// keeping a usual head's capacity for the next response.
    private func finishResponse() {
        if head.capacity > 4096 { head = [] } else { head.removeAll(keepingCapacity: true) }
        body = []
    }

    /// One writev of what is left of the head and the body.
    private func writeSome() throws -> IOResult {
        try head.withUnsafeBytes { head in
            try body.withUnsafeBytes { body in
                try withUnsafeTemporaryAllocation(of: iovec.self, capacity: 2) { iov in
                    var count = 0
                    if written < head.count {
                        iov[0] = iovec(iov_base: UnsafeMutableRawPointer(mutating: head.baseAddress! + written),
                                       iov_len: head.count - written)
                        count = 1
                        if body.count > 0 {
                            iov[1] = iovec(iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress!), iov_len: body.count)
                            count = 2
                        }
                    } else {
                        let offset = written - head.count
                        iov[0] = iovec(iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress! + offset),
                                       iov_len: body.count - offset)
                        count = 1
                    }
                    return try Socket.writev(fd, iov.baseAddress!, Int32(count))
                }
            }
        }
    }

    private func closeSocket(cancelRequest: Bool) {
        timer?.cancel()
        if cancelRequest {
            responder?.cancel()
            server.requestFinished()
        }
        responder = nil
        // Out of the epoll set before the descriptor can close (and be reused).
        io.poller.remove(self)
        LingeringClose.start(fd: fd, queue: queue)
        head = []
        body = []
        server.connectionClosed(self)
    }
}
