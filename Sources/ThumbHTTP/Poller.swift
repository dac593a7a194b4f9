import CThumbSys
@preconcurrency import Dispatch
import Glibc
import ThumbClock

/// One epoll instance per I/O queue (and one for the listeners, on the
/// accept queue), watched by one Dispatch read source on that queue: the
/// sockets of the queue register once, edge-triggered, and a wake-up serves
/// every socket that became ready since the last one.
/// A Dispatch source per socket cost, per read event, an ioctl, two
/// `epoll_ctl` re-arms and a hand-off between threads (HTTPServer.md
/// § I/O queues); and a source per lingering socket crashed libdispatch
/// under churn (`LingeringClose`). So the pollers' sources, each on an
/// epoll descriptor (which never hangs up and is closed only with its
/// poller), are the only Dispatch sources on a descriptor in ThumbHTTP.
///
/// The poller owns the descriptors registered with it: it alone closes
/// them, always after taking them out of the set, so no event it reports
/// can be for a closed descriptor, nor reach its next owner: events are
/// looked up by the id each socket was registered with, and ids are never
/// reused. Everything but `init` and `deinit` runs on `queue`.
final class Poller: @unchecked Sendable {
    /// What an id in the set stands for.
    private enum Entry {
        case connection(Connection)
        case lingering(LingeringClose)
        case listener(Listener)
    }

    private let epfd: Int32
    private let queue: DispatchQueue
    private let source: DispatchSourceRead
    private var entries: [Int: Entry] = [:]
    private var events: [thumbd_epoll_event]
    /// How long a closed socket may linger: `LingeringClose.seconds`.
    private let lingering: Duration
    /// Lingering closes in the order they began, which is their deadline
    /// order (they all last `lingering`). Ended ones stay until
    /// the sweep passes them; `lingerHead` is the first not swept yet.
    private var lingerOrder: [(id: Int, deadline: MonotonicClock.Instant)] = []
    private var lingerHead = 0
    /// Ends lingering closes that reached their deadline: one timer for the
    /// whole queue, moved at most once a sweep, not one per socket.
    private var sweepTimer: DispatchSourceTimer?
    private var sweepScheduled = false
    /// Where lingering sockets' bytes are read to be dropped.
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 16384, alignment: 16)

    private static let batch = 64
    /// Sweeps come at least this far apart and end every lingering close due
    /// before the next one could: a close lingers between `lingering` less
    /// this and `lingering` (as late as Dispatch fires the sweep).
    static let lingerSweep = Duration.milliseconds(250)

    init(queue: DispatchQueue, lingering: Duration) {
        self.lingering = lingering
        let fd = thumbd_epoll_create()
        // Only at server start, and only when out of descriptors or memory.
        precondition(fd >= 0, "epoll_create1: \(String(cString: strerror(errno)))")
        epfd = fd
        self.queue = queue
        events = [thumbd_epoll_event](repeating: thumbd_epoll_event(), count: Self.batch)
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setCancelHandler { Glibc.close(fd) }
        // Weak: the source must not keep the poller (and its epoll fd) alive
        // once the server and its connections are gone.
        source.setEventHandler { [weak self] in self?.dispatchReady() }
        source.resume()
    }

    /// The server is gone: what still lingers, or listens, closes now.
    deinit {
        sweepTimer?.cancel()
        source.cancel()
        for entry in entries.values {
            switch entry {
            case .lingering(let l): Glibc.close(l.fd)
            case .listener(let l): Glibc.close(l.fd)
            case .connection: break   // a connection keeps its server, hence its poller, alive until it closes
            }
        }
        scratch.deallocate()
    }

    /// Watches `connection`'s socket until `close`; false if the kernel refused.
    func add(_ connection: Connection) -> Bool {
        guard thumbd_epoll_add(epfd, connection.fd, UInt64(connection.id)) == 0 else { return false }
        entries[connection.id] = .connection(connection)
        return true
    }

    /// Watches a listening socket until `close`; false if the kernel refused.
    func add(_ listener: Listener) -> Bool {
        guard thumbd_epoll_add(epfd, listener.fd, UInt64(listener.id)) == 0 else { return false }
        entries[listener.id] = .listener(listener)
        return true
    }

    /// The connection is done with its socket; the poller closes it.
    /// `linger`: the client may still be sending, so send FIN and let the
    /// socket linger (`LingeringClose`) before it closes; otherwise (the
    /// client closed its side or the socket failed, so nothing more can
    /// arrive) close at once.
    func close(_ connection: Connection, linger: Bool) {
        let id = connection.id, fd = connection.fd
        var registered = false
        if case .connection? = entries[id] { registered = true }
        if linger {
            shutdown(fd, Int32(SHUT_WR))
            // A connection closed before it started (a drain reached it
            // first) was never in the set: it enters it now to linger.
            if registered || thumbd_epoll_add(epfd, fd, UInt64(id)) == 0 {
                let lingering = LingeringClose(fd: fd, deadline: MonotonicClock().now.advanced(by: lingering))
                entries[id] = .lingering(lingering)
                lingerOrder.append((id, lingering.deadline))
                scheduleSweep()
                // What came while the connection was writing raised its edge
                // already: read it now, no new edge may come for it.
                if lingering.drain(scratch) { endLingering(id) }
                return
            }
        }
        if registered {
            entries[id] = nil
            _ = thumbd_epoll_remove(epfd, fd)
        }
        Glibc.close(fd)
    }

    /// Stops listening on `listener` and closes its socket.
    func close(_ listener: Listener) {
        guard case .listener? = entries[listener.id] else { return }
        entries[listener.id] = nil
        _ = thumbd_epoll_remove(epfd, listener.fd)
        Glibc.close(listener.fd)
    }

    /// Drains the ready list: a full batch means more may be waiting. A short
    /// one ends the turn: looking again until the list is empty (up to 8
    /// rounds) saved syscalls and context switches and gave ~10 % more hits
    /// per second, but kept the I/O threads runnable beside the client on two
    /// cores and took a hit's p99 from ~2.8 to ~5 ms.
    private func dispatchReady() {
        while true {
            let n = events.withUnsafeMutableBufferPointer {
                thumbd_epoll_ready(epfd, $0.baseAddress, Int32($0.count))
            }
            guard n > 0 else { return }
            for i in 0..<Int(n) {
                let event = events[i]
                let readable = event.events & UInt32(THUMBD_EPOLL_READABLE) != 0
                switch entries[Int(event.id)] {
                case .connection(let connection)?:
                    connection.ready(readable: readable,
                                     writable: event.events & UInt32(THUMBD_EPOLL_WRITABLE) != 0,
                                     hangUp: event.events & UInt32(THUMBD_EPOLL_HANGUP) != 0)
                case .lingering(let lingering)?:
                    if readable && lingering.drain(scratch) { endLingering(Int(event.id)) }
                case .listener(let listener)?:
                    if readable { listener.ready(listener) }
                case nil:
                    continue   // closed since the kernel queued the event
                }
            }
            if n < Int32(Self.batch) { return }
        }
    }

    /// Out of the set, then closed: the one place a lingering socket closes.
    private func endLingering(_ id: Int) {
        guard case .lingering(let lingering)? = entries[id] else { return }
        entries[id] = nil
        _ = thumbd_epoll_remove(epfd, lingering.fd)
        Glibc.close(lingering.fd)
    }

    /// Ends the lingering closes due before the next sweep could, and plans
    /// that sweep if any is left.
    private func sweep() {
        sweepScheduled = false
        let horizon = MonotonicClock().now.advanced(by: Self.lingerSweep)
        while lingerHead < lingerOrder.count, lingerOrder[lingerHead].deadline <= horizon {
            endLingering(lingerOrder[lingerHead].id)   // nothing if it ended already
            lingerHead += 1
        }
        if lingerHead == lingerOrder.count {
            lingerOrder.removeAll(keepingCapacity: lingerOrder.count <= 4096)
            lingerHead = 0
        } else if lingerHead >= 4096 {
            lingerOrder.removeFirst(lingerHead)
            lingerHead = 0
        }
        scheduleSweep()
    }

    /// Schedules the sweep for the first lingering close still listed, at
    /// least `lingerSweep` from now, unless one is scheduled.
    private func scheduleSweep() {
        guard !sweepScheduled, lingerHead < lingerOrder.count else { return }
        let now = MonotonicClock().now
        let due = now.duration(to: lingerOrder[lingerHead].deadline) - Self.lingerSweep
        let delay = max(due, Self.lingerSweep)
        let timer: DispatchSourceTimer
        if let sweepTimer {
            timer = sweepTimer
        } else {
            timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [weak self] in self?.sweep() }
            timer.resume()
            sweepTimer = timer
        }
        timer.schedule(deadline: .now() + delay.dispatchInterval, leeway: .milliseconds(50))
        sweepScheduled = true
    }
}
