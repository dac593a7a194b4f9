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
    /// The machine on the production clock (`ContinuousClock`'s time, as
    /// `MonotonicClock` instants of fixed layout), named concretely: it
    /// specializes within this module, and reading the time is a vDSO call,
    /// not a call through a protocol witness, per event. Its deadlines become
    /// `DispatchTime` only when the one timer is scheduled.
    typealias Machine = ConnectionStateMachine<MonotonicClock>

    let id: Int
    let fd: Int32
    let io: IOQueue
    var queue: DispatchQueue { io.queue }
    /// Strong, not `unowned`: a block of this connection's queue may run after
    /// a stopped server let go of it, and must then find the server alive
    /// rather than trap. The cycle (server → its open connections → server)
    /// ends when the connection closes and the server drops it.
    let server: HTTPServer
    var machine: Machine
    private var timer: DispatchSourceTimer?
    // I/O bookkeeping only: what the socket, the poller and the read loop
    // are up to, which the machine never sees. Where the response stands in
    // the pending-bytes budget (charged, waiting for room, refused for want
    // of it) is the machine's (`room`); the driver only performs its actions.
    /// Reading is paused (the machine's `.pause`, until its `.resume`): the
    /// read loop tests this on every pass, a plain flag rather than an
    /// exclusivity-checked look into the machine.
    private var readSuspended = false
    /// The socket is closed (`.close` was performed); late events find it so.
    private var closed = false
    /// The socket may hold bytes (or end of stream) not read yet: a readable
    /// edge came, or the last read filled the buffer. False after EAGAIN or
    /// a short read; the next bytes to arrive raise a new edge.
    private var readReady = false
    /// The peer shut down or the socket failed: a short read does not mean
    /// the socket is drained, end of stream still waits to be read.
    private var peerHungUp = false
    /// End of stream was read, or a read or write failed: nothing more can
    /// arrive, so the socket closes without lingering.
    var peerDone = false
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
    var head: [UInt8] = []
    var body: [UInt8] = []
    var written = 0
    /// A streamed body's parts queued by the application and not yet framed
    /// into a piece (HTTPServer.md, Streamed responses), and how they are framed.
    var queuedParts: [UInt8] = []
    var framing = BodyFraming.length

    init(id: Int, fd: Int32, io: IOQueue, server: HTTPServer, limits: ConnectionLimits,
         screenHead: @escaping (HTTPRequest) -> HTTPResponse?, renderError: @escaping HTTPError.Renderer) {
        self.id = id
        self.fd = fd
        self.io = io
        self.server = server
        machine = Machine(limits: limits, screenHead: screenHead, renderError: renderError)
    }

    static func now() -> MonotonicClock.Instant { MonotonicClock().now }

    func start() {
        // A drain that reached the connection before its start closed it already.
        guard !closed else { return }
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
        guard !closed else { return }
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
        guard started, !closed, !readSuspended else { return perform(machine.drain()) }
        let result: IOResult
        do {
            result = try io.readBuffer.withUnsafeMutableBytes { try Socket.read(fd, into: $0) }
        } catch {
            peerDone = true
            return perform(machine.peerClosed())
        }
        switch result {
        case .wouldBlock: perform(machine.drain())
        case .processed(0):
            peerDone = true
            perform(machine.inputEnded(now: Self.now()))
            perform(machine.drain())
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
    func perform(_ actions: Machine.Actions) {
        if let delay = actions.timer { schedule(after: delay) }
        var resumed = false
        switch actions.reading {
        case .pause?:
            readSuspended = true
        case .resume?:
            if readSuspended { readSuspended = false; resumed = true }
        case nil:
            break
        }
        if actions.requestFinished {
            responder = nil
            server.requestFinished()
        }
        if actions.sendTimedOut { server.sendTimedOut() }
        switch actions.room {
        case .release?: server.releasePending(self)
        case .credit?, nil: break   // a credit is the reporter's (`flush`), which knows the count
        }
        switch actions.next {
        case .none: break
        case .startRequest(let request): startRequest(request)
        case .write(let outgoing, let reserveRoom):
            serialize(outgoing)
            if reserveRoom { reserve(outgoing) } else { flush(mayBeWaiting: false) }
        case .writePart(let last):
            serializePart(last: last)
            reservePart()
        case .send: flush(mayBeWaiting: false)
        case .probePeer: probePeer()
        case .close(let cancelRequest): closeSocket(cancelRequest: cancelRequest)
        }
        // After `next`, for the reason above. No edge comes for bytes that
        // arrived while reading was paused: read them now.
        if resumed { readAvailable() }
    }

    /// Dispatch's timers run on its own clock: the machine's deadline comes
    /// over as "this long after the event". A timer that so fires a little
    /// early finds the deadline not reached and is scheduled again (`timerFired`).
    private func schedule(after delay: Duration) {
        let deadline = DispatchTime.now() + max(.zero, delay).dispatchInterval
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
        while readReady, !readSuspended, !closed {
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
                peerDone = true
                perform(machine.peerClosed())
                return
            }
            switch result {
            case .wouldBlock:
                readReady = false
            case .processed(0):
                readReady = false
                if peerDone {
                    // End of stream again, on a new edge: after its FIN a
                    // reset only shows as the socket's error (a read keeps
                    // saying end of stream), and it means the client is gone.
                    if Socket.pendingError(fd) != 0 { perform(machine.peerClosed()) }
                } else {
                    peerDone = true
                    perform(machine.inputEnded(now: Self.now()))
                }
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

    /// The head of a streamed answer, from any thread (through `Responder.stream`).
    func streamReady(_ head: HTTPResponse) {
        if io.isCurrent {
            perform(machine.responseReady(head, now: Self.now(), streamed: true))
        } else {
            queue.async { self.perform(self.machine.responseReady(head, now: Self.now(), streamed: true)) }
        }
    }

    /// A part of the streamed answer, from any thread (through
    /// `ResponseStream`). Always by the queue, never at once: so it comes
    /// after the head whichever thread sent that.
    func partQueued(_ part: [UInt8]) {
        queue.async { [self] in
            guard !closed, machine.stream != nil else { return }
            queuedParts += part
            perform(machine.partQueued(now: Self.now()))
        }
    }

    /// The end of the streamed answer, from any thread, after its parts.
    func streamEnded() {
        queue.async { [self] in
            guard !closed else { return }
            perform(machine.streamEnded(now: Self.now()))
        }
    }

    private func closeSocket(cancelRequest: Bool) {
        timer?.cancel()
        if cancelRequest {
            responder?.cancel()
            server.requestFinished()
        }
        responder = nil
        closed = true
        // The poller takes the descriptor: out of the epoll set before it
        // closes (and its number is reused), lingering first unless the
        // client is known to send nothing more.
        io.poller.close(self, linger: !peerDone)
        head = []
        body = []
        queuedParts = []
        server.connectionClosed(self)
    }
}
