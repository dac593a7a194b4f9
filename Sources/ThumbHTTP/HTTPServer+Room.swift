@preconcurrency import Dispatch
import ThumbClock

/// The server's side of the pending-bytes budget (`http.maxPendingResponseBytes`,
/// HTTPServer.md, Slow readers): its connections ask the ledger for room and
/// report what their sockets took; the server closes the connections the
/// ledger gives up, and looks at it again while responses wait, as charged
/// connections stall.
extension HTTPServer {
    /// How long a connection must have taken none of its response before it
    /// may be closed to make room: a quarter of the send timeout (7.5 s by
    /// default). A client that reads, however slowly, takes some within
    /// that (HTTPServer.md, Slow readers); one that takes nothing gives its
    /// room up well before the send timeout would close it.
    static func stalledForRoom(_ configuration: HTTPServerConfiguration) -> Duration {
        .seconds(max(0, configuration.sendTimeoutSeconds) / 4)
    }

    /// Charges a `bytes`-long response of `connection` to the pending-bytes
    /// budget. `.write`: write it now. `.wait`: `connection.admitted()` runs
    /// on its queue once there is room; connections that have made no
    /// progress for `stalledForRoom` are closed to make that room, now (done
    /// here) or as they stall. `.refuse`: no room to wait either; answer
    /// `HTTPError.noRoomForResponse` instead.
    /// `refusable` false (a part of a streamed answer): it waits rather than being refused.
    func reserve(_ connection: Connection, bytes: Int, refusable: Bool = true) -> RoomDecision {
        let decision = pending.withLock {
            $0.reserve(id: connection.id, bytes: bytes, now: Connection.now(), refusable: refusable)
        }
        if case .wait(let evict) = decision {
            closeForRoom(evict)
            roomQueue.async { [self] in scheduleEvictionCheck() }
        }
        return decision
    }

    private func closeForRoom(_ ids: [Int]) {
        guard !ids.isEmpty else { return }
        let victims = state.withLock { s in ids.compactMap { s.connections[$0] } }
        for c in victims { c.queue.async { c.evict() } }
    }

    /// Plans a look at the ledger for when the next charged connection will
    /// have stalled long enough to be closed for the responses waiting, if
    /// any still need room; an earlier look already planned stands. On
    /// `roomQueue`.
    func scheduleEvictionCheck() {
        guard let next = pending.withLock({ $0.nextEviction }) else { return }
        if let planned = evictionCheckAt, planned <= next { return }
        evictionCheckAt = next
        let timer: DispatchSourceTimer
        if let evictionTimer {
            timer = evictionTimer
        } else {
            timer = DispatchSource.makeTimerSource(queue: roomQueue)
            timer.setEventHandler { [weak self] in self?.evictionCheckFired() }
            timer.resume()
            evictionTimer = timer
        }
        let delay = max(.zero, Connection.now().duration(to: next))
        timer.schedule(deadline: .now() + delay.dispatchInterval, leeway: .milliseconds(10))
    }

    /// Closes what stalled meanwhile, then plans the next look. Progress
    /// since the plan was made only moves the next look later; a timer that
    /// fires a little early finds nobody stalled yet and plans again.
    private func evictionCheckFired() {
        evictionCheckAt = nil
        closeForRoom(pending.withLock { $0.evictStale(now: Connection.now()) })
        scheduleEvictionCheck()
    }

    /// The socket took `bytes` of `connection`'s charged response.
    func written(_ connection: Connection, bytes: Int) {
        let admitted = pending.withLock { $0.written(id: connection.id, bytes: bytes, now: Connection.now()) }
        admit(admitted)
    }

    /// `connection`'s response is done or the connection closed: what is left
    /// of its charge goes back to the budget, and a waiting response is dropped.
    func releasePending(_ connection: Connection) {
        let admitted = pending.withLock { $0.remove(id: connection.id, now: Connection.now()) }
        admit(admitted)
    }

    private func admit(_ ids: [Int]) {
        guard !ids.isEmpty else { return }
        let ready = state.withLock { s in ids.compactMap { s.connections[$0] } }
        for c in ready { c.queue.async { c.admitted() } }
    }
}
