/// The response bytes held for clients, across every connection, against
/// `http.maxPendingResponseBytes` (HTTPServer.md, Slow readers). Pure:
/// connection ids, sizes and times go in, decisions come out; `HTTPServer`
/// keeps one under a lock and performs them. Generic over the clock, so tests
/// order progress on a manual one.
///
/// Two amounts, each at most `limit`, so responses held in memory stay
/// within twice the budget:
/// - charged: a response is charged in full (head and body) before its first
///   byte is written and credited as the socket takes it; the rest is
///   credited when it completes or its connection closes, whichever way.
/// - waiting: a finished response that does not fit waits in line, its body
///   in memory. One that would push the line past `limit` is refused (the
///   connection answers a small `503` instead and drops the body).
///
/// While responses wait, connections that have made no progress for
/// `staleAfter` are closed, those stalled longest first, as many as it takes
/// so that once they are gone every waiting response fits. A connection
/// whose client is reading is never closed to make room: the new responses
/// wait for it instead (`nextEviction` says when to look again, as
/// connections stall). Waiting responses are charged in arrival order as
/// they fit; a later one goes first (passes) only into room that the ones
/// ahead of it are not promised, so passing never delays them: a waiting
/// response is charged at the latest when the connections closed for it
/// are gone.
struct PendingResponseLedger<C: Clock> where C.Duration == Duration {
    typealias Instant = C.Instant
    typealias Decision = RoomDecision

    /// Bytes; the most charged, and the most waiting, at once.
    var limit: Int
    /// How long a charged connection must have made no progress (the
    /// socket took none of its response) before it may be closed to make
    /// room. The server's is a quarter of the send timeout (HTTPServer.md,
    /// Slow readers, says why).
    var staleAfter: Duration
    /// Bytes charged now, over every connection.
    private(set) var total = 0
    /// The most `total` ever was.
    private(set) var peak = 0
    /// Bytes of responses waiting for room now.
    private(set) var waitingTotal = 0
    /// The most `waitingTotal` ever was.
    private(set) var waitingPeak = 0
    /// Connections closed to make room.
    private(set) var evictions = 0
    /// Responses refused because the line of waiting ones was full.
    private(set) var refusals = 0

    private struct Charge {
        var bytes: Int
        var lastProgress: Instant
    }

    /// At most one response per connection is being written (pipelined
    /// answers go out in order), so one charge per connection.
    private var charges: [Int: Charge] = [:]
    /// In arrival order. A connection is either charged or here, never both.
    private var waiting: [(id: Int, bytes: Int)] = []
    /// Connections told to close for room, not yet removed; their bytes are
    /// as good as free when deciding whether to close more, or to let a
    /// response pass.
    private var evicting: Set<Int> = []

    init(limit: Int, staleAfter: Duration) {
        self.limit = limit
        self.staleAfter = staleAfter
    }

    /// Asks to queue a `bytes`-long response on connection `id`. Not
    /// `refusable` (a part of a streamed answer, which cannot become a `503`
    /// once its head is out): it waits in line whatever the line holds; its
    /// size is the application's to bound.
    mutating func reserve(id: Int, bytes: Int, now: Instant, refusable: Bool = true) -> Decision {
        if admissible(bytes, ahead: waitingTotal) {
            charge(id: id, bytes: bytes, now: now)
            return .write
        }
        // Alone in line, a response larger than the budget may wait: it
        // gets through when nothing else is charged.
        guard !refusable || waiting.isEmpty || waitingTotal + bytes <= limit else {
            refusals += 1
            return .refuse
        }
        waiting.append((id, bytes))
        waitingTotal += bytes
        waitingPeak = max(waitingPeak, waitingTotal)
        return .wait(evict: victims(now: now))
    }

    /// The connections to close now for the responses waiting: those that
    /// have stalled for `staleAfter` since they were last looked at. Call at
    /// `nextEviction`.
    mutating func evictStale(now: Instant) -> [Int] {
        victims(now: now)
    }

    /// When a charged connection, if it makes no progress meanwhile, will
    /// have stalled long enough to be closed for the responses waiting; nil
    /// when none needs to be (they fit once the connections closing are
    /// gone, or nothing waits).
    var nextEviction: Instant? {
        guard shortfall > 0 else { return nil }
        return charges.lazy.filter { !evicting.contains($0.key) }.map { $0.value.lastProgress.advanced(by: staleAfter) }.min()
    }

    /// The socket took `bytes` of connection `id`'s response. Returns the
    /// waiting connections now charged: they may write.
    mutating func written(id: Int, bytes: Int, now: Instant) -> [Int] {
        guard var c = charges[id], bytes > 0 else { return [] }
        let credited = min(bytes, c.bytes)
        c.bytes -= credited
        c.lastProgress = now
        charges[id] = c
        total -= credited
        return admit(now: now)
    }

    /// Connection `id`'s response is done, or the connection closed: credits
    /// what is left of its charge and drops it from the line. Returns the
    /// waiting connections now charged.
    mutating func remove(id: Int, now: Instant) -> [Int] {
        if let c = charges.removeValue(forKey: id) { total -= c.bytes }
        if let i = waiting.firstIndex(where: { $0.id == id }) {
            waitingTotal -= waiting.remove(at: i).bytes
        }
        evicting.remove(id)
        return admit(now: now)
    }

    /// Whether a response with `ahead` bytes waiting before it may be charged
    /// now: it fits beside what is charged, and, if it would pass waiting
    /// ones, also beside all of them once the connections closing are gone
    /// (the room they are promised). A response larger than the whole budget
    /// goes when it is first and nothing else is charged: waiting forever
    /// would help nobody.
    private func admissible(_ bytes: Int, ahead: Int) -> Bool {
        guard total + bytes <= limit || total == 0 else { return false }
        return ahead == 0 || total - closingBytes + ahead + bytes <= limit
    }

    private var closingBytes: Int {
        evicting.reduce(0) { $0 + (charges[$1]?.bytes ?? 0) }
    }

    private mutating func charge(id: Int, bytes: Int, now: Instant) {
        charges[id] = Charge(bytes: bytes, lastProgress: now)
        total += bytes
        peak = max(peak, total)
    }

    /// Charges, in order, every waiting response that may go now.
    private mutating func admit(now: Instant) -> [Int] {
        var admitted: [Int] = []
        var ahead = 0
        var i = 0
        while i < waiting.count {
            let w = waiting[i]
            if admissible(w.bytes, ahead: ahead) {
                waiting.remove(at: i)
                waitingTotal -= w.bytes
                charge(id: w.id, bytes: w.bytes, now: now)
                admitted.append(w.id)
            } else {
                ahead += w.bytes
                i += 1
            }
        }
        return admitted
    }

    /// Bytes that must still be freed, beyond the connections closing, for
    /// every waiting response to fit.
    private var shortfall: Int { total - closingBytes + waitingTotal - limit }

    /// Enough stalled charged connections, least recent progress first,
    /// that once they are gone every waiting response fits; fewer (maybe
    /// none) if not enough have stalled for `staleAfter`.
    private mutating func victims(now: Instant) -> [Int] {
        var needed = shortfall
        guard needed > 0 else { return [] }
        var chosen: [Int] = []
        let candidates = charges.filter { !evicting.contains($0.key) && $0.value.lastProgress.advanced(by: staleAfter) <= now }
            .sorted { ($0.value.lastProgress, $0.key) < ($1.value.lastProgress, $1.key) }
        for (id, c) in candidates where needed > 0 {
            chosen.append(id)
            evicting.insert(id)
            needed -= c.bytes
        }
        evictions += chosen.count
        return chosen
    }
}
