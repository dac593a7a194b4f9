@preconcurrency import Dispatch
import Foundation
import Glibc
import Synchronization
import ThumbClock

/// thumbd's HTTP/1.1 server: non-blocking sockets in edge-triggered epoll
/// sets, one per I/O queue for its connections and one on the accept queue
/// for the listeners, each driven by one Dispatch source on its epoll
/// descriptor (`Poller`).
/// It knows nothing of images; its `HTTPApplication` answers requests.
public final class HTTPServer: @unchecked Sendable {
    private let limits: Mutex<HTTPServerConfiguration>
    /// The limits in force; `update(_:)` replaces them on a config reload.
    public var configuration: HTTPServerConfiguration { limits.withLock { $0 } }
    /// The handler and the rest of what the application decides (`HTTPApplication`).
    let application: HTTPApplication
    var handler: HTTPHandler { application.handler }

    struct State {
        var stats = ServerStatistics()
        var connections: [Int: Connection] = [:]
        var nextID = 0
        var draining = false
        var drainCompletion: (@Sendable () -> Void)?
    }

    let state = Mutex(State())
    /// Response bytes queued for clients (`http.maxPendingResponseBytes`).
    let pending: Mutex<PendingResponseLedger<MonotonicClock>>
    /// Where the ledger is looked at again while responses wait, as charged
    /// connections stall (HTTPServer+Room.swift); it and the two below are
    /// touched only on it.
    let roomQueue = DispatchQueue(label: "thumbd.room")
    var evictionTimer: DispatchSourceTimer?
    var evictionCheckAt: MonotonicClock.Instant?
    private let acceptFailures = Mutex(AcceptFailures<MonotonicClock>())
    /// The `Date` header, from the wall clock given at init.
    let dates: HTTPDate
    private let acceptQueue = DispatchQueue(label: "thumbd.accept")
    /// The listeners' epoll set; it and `listeners`, `nextListenerID` and
    /// `acceptPaused` are touched only on `acceptQueue`.
    private let acceptPoller: Poller
    private let ioQueues: [IOQueue]
    private var listeners: [Listener] = []
    private var nextListenerID = 0
    /// Accepting pauses after running out of descriptors (`acceptAll`).
    private var acceptPaused = false

    /// `wallClock`: where the `Date` header comes from.
    public convenience init(configuration: HTTPServerConfiguration, wallClock: any WallClock = SystemWallClock(),
                            application: HTTPApplication) {
        self.init(configuration: configuration, ioQueues: ProcessInfo.processInfo.activeProcessorCount,
                  wallClock: wallClock, application: application)
    }

    /// A server whose application is its handler alone (plain-text errors, no hooks).
    public convenience init(configuration: HTTPServerConfiguration, wallClock: any WallClock = SystemWallClock(),
                            handler: @escaping HTTPHandler) {
        self.init(configuration: configuration, wallClock: wallClock, application: HTTPApplication(handler: handler))
    }

    /// `ioQueues` serial queues (each with its epoll instance) share the
    /// connections; tests choose one to put many connections on it.
    /// `lingering`: how long a closed connection may linger
    /// (`LingeringClose.seconds`); tests make it long to tell what else ends it.
    init(configuration: HTTPServerConfiguration, ioQueues count: Int, wallClock: any WallClock = SystemWallClock(),
         lingering: Duration = LingeringClose.seconds, application: HTTPApplication) {
        limits = Mutex(configuration)
        pending = Mutex(PendingResponseLedger(limit: configuration.maxPendingResponseBytes,
                                              staleAfter: Self.stalledForRoom(configuration)))
        dates = HTTPDate(clock: wallClock)
        self.application = application
        ioQueues = (0..<max(1, count)).map { IOQueue(label: "thumbd.io.\($0)", lingering: lingering) }
        acceptPoller = Poller(queue: acceptQueue, lingering: lingering)
    }

    /// Tests: the internal form with a handler alone.
    convenience init(configuration: HTTPServerConfiguration, ioQueues count: Int, lingering: Duration = LingeringClose.seconds,
                     handler: @escaping HTTPHandler) {
        self.init(configuration: configuration, ioQueues: count, lingering: lingering,
                  application: HTTPApplication(handler: handler))
    }

    deinit { evictionTimer?.cancel() }

    /// Starts listening; returns the bound port for `inet` addresses (useful with port 0).
    @discardableResult
    public func listen(_ address: ListenAddress) throws(SocketError) -> UInt16 {
        let fd = try Socket.listen(address)
        let port: UInt16 = if case .inet = address { Socket.boundPort(fd) } else { 0 }
        // Registering reports the connections already waiting as an edge.
        // The listener keeps the server until the drain closes it, as a
        // running server must stay.
        let added: Bool = acceptQueue.sync {
            nextListenerID += 1
            let listener = Listener(fd: fd, id: nextListenerID) { [self] in acceptAll($0) }
            guard acceptPoller.add(listener) else { return false }
            listeners.append(listener)
            return true
        }
        guard added else {
            let error = SocketError(operation: "epoll_ctl", errno: errno)
            Glibc.close(fd)
            throw error
        }
        return port
    }

    public var statistics: ServerStatistics {
        var stats = state.withLock { $0.stats }
        pending.withLock { ledger in
            stats.pendingResponseBytes = ledger.total
            stats.pendingResponseBytesPeak = ledger.peak
            stats.pendingResponseBytesWaiting = ledger.waitingTotal
            stats.pendingResponseBytesWaitingPeak = ledger.waitingPeak
            stats.connectionsClosedForRoom = ledger.evictions
            stats.responsesRefusedForRoom = ledger.refusals
        }
        stats.acceptFailures = acceptFailures.withLock { $0.total }
        return stats
    }

    /// New limits (SIGHUP): connections and requests that start from now on
    /// see them; nothing open is dropped.
    public func update(_ configuration: HTTPServerConfiguration) {
        // Under the state lock, so a connection accepted meanwhile either saw
        // the new limits or is in the list told about them.
        let open: [Connection] = state.withLock { s in
            limits.withLock { $0 = configuration }
            return Array(s.connections.values)
        }
        pending.withLock {
            $0.limit = configuration.maxPendingResponseBytes
            $0.staleAfter = Self.stalledForRoom(configuration)
        }
        // A shorter send timeout may make waiting responses' room due sooner.
        roomQueue.async { [self] in scheduleEvictionCheck() }
        let connectionLimits = ConnectionLimits(configuration)
        for c in open { c.queue.async { c.update(connectionLimits) } }
    }

    /// Calls `done` once the accept queue and every I/O queue have run a
    /// block: a watchdog's proof that the event loop is not stuck.
    public func heartbeat(_ done: @escaping @Sendable () -> Void) {
        let group = DispatchGroup()
        group.enter()
        acceptQueue.async { group.leave() }
        for io in ioQueues {
            group.enter()
            io.queue.async { group.leave() }
        }
        group.notify(queue: .global(), execute: done)
    }

    /// True once a drain started: `/healthz` answers 503 from then on.
    public var isDraining: Bool { state.withLock { $0.draining } }

    /// Accepts until the backlog is empty (the listener is edge-triggered: no
    /// new edge comes for connections left waiting). On the accept queue.
    private func acceptAll(_ listener: Listener) {
        guard !acceptPaused else { return }
        while true {
            let client: Int32
            do {
                guard let accepted = try Socket.accept(listener.fd) else { return }
                client = accepted
            } catch {
                let failure = acceptFailures.withLock { $0.failed(errno: error.errno, now: Connection.now()) }
                if let message = failure.warning { application.onWarning?(message) }
                if let pause = failure.pause {
                    // Out of descriptors or memory: the pending connection stays
                    // in the backlog, so retrying at once would spin. Pause
                    // accepting briefly, then try every listener again: no
                    // edge announces what waited meanwhile.
                    acceptPaused = true
                    acceptQueue.asyncAfter(deadline: .now() + pause.dispatchInterval) { [self] in
                        acceptPaused = false
                        for l in listeners { acceptAll(l) }
                    }
                }
                return
            }
            let connection: Connection? = state.withLock { s in
                let limits = configuration
                s.stats.connectionsAccepted += 1
                guard !s.draining, s.connections.count < limits.maxConnections else { return nil }
                s.nextID += 1
                let c = Connection(id: s.nextID, fd: client, io: ioQueues[s.nextID % ioQueues.count],
                                   server: self, limits: ConnectionLimits(limits),
                                   screenHead: { [screenHead = application.screenHead] in screenHead?($0) },
                                   renderError: application.renderError)
                s.connections[c.id] = c
                s.stats.connectionsOpen = s.connections.count
                return c
            }
            guard let connection else {
                Glibc.close(client)   // over maxConnections: accepted and closed at once
                continue
            }
            connection.queue.async { connection.start() }
        }
    }

    func sendTimedOut() {
        state.withLock { $0.stats.sendTimeouts += 1 }
    }

    /// The open connections, for tests that drive one directly.
    var openConnections: [Connection] { state.withLock { Array($0.connections.values) } }

    func requestStarted() {
        state.withLock { $0.stats.requestsActive += 1 }
    }

    func requestFinished() {
        state.withLock { $0.stats.requestsActive -= 1 }
    }

    func responded(_ record: ResponseRecord) {
        state.withLock { s in
            s.stats.requestsTotal += 1
            s.stats.byStatus[record.status, default: 0] += 1
        }
        application.onResponse?(record)
    }

    func connectionClosed(_ connection: Connection) {
        let completion: (@Sendable () -> Void)? = state.withLock { s in
            s.connections[connection.id] = nil
            s.stats.connectionsOpen = s.connections.count
            guard s.draining, s.connections.isEmpty else { return nil }
            defer { s.drainCompletion = nil }
            return s.drainCompletion
        }
        completion?()
    }

    /// Graceful drain (ServiceLife.md): stop accepting, close idle connections, let
    /// requests in flight finish until `deadline`, then close the rest.
    /// `completion` runs once, when no connection is left.
    public func drain(deadline seconds: Double, completion: @escaping @Sendable () -> Void) {
        acceptQueue.sync {
            for l in listeners { acceptPoller.close(l) }
            listeners = []
        }
        let connections: [Connection] = state.withLock { s in
            s.draining = true
            s.drainCompletion = completion
            return Array(s.connections.values)
        }
        if connections.isEmpty {
            let done = state.withLock { s -> (@Sendable () -> Void)? in
                defer { s.drainCompletion = nil }
                return s.drainCompletion
            }
            done?()
            return
        }
        for c in connections { c.queue.async { c.beginDrain() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
            let rest = state.withLock { Array($0.connections.values) }
            for c in rest { c.queue.async { c.close() } }
        }
    }
}
