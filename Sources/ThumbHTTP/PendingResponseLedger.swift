/// The response bytes queued for clients, across every connection, against
/// `http.maxPendingResponseBytes` (README § HTTP server). Pure: connection ids
/// and times go in, decisions come out; `HTTPServer` keeps one under a lock
/// and performs them.
///
/// A response is charged in full (head and body) before its first byte is
/// written and credited as the socket takes it; the rest is credited when it
/// completes or its connection closes, whichever way. A response that does
/// not fit waits (first come, first served) and the connections that have
/// made no progress for longest are closed, as many as it takes to make room.
struct PendingResponseLedger {
    typealias Instant = ConnectionStateMachine.Instant

    /// Bytes; past it responses wait.
    var limit: Int
    /// Bytes charged now, over every connection.
    private(set) var total = 0
    /// The most `total` ever was.
    private(set) var peak = 0
    /// Connections closed to make room.
    private(set) var evictions = 0

    private struct Charge {
        var bytes: Int
        var lastProgress: Instant
    }

    /// At most one response per connection is being written (pipelined
    /// answers go out in order), so one charge per connection.
    private var charges: [Int: Charge] = [:]
    private var waiting: [(id: Int, bytes: Int)] = []
    /// Connections told to close for room, not yet removed; their bytes are
    /// as good as free when deciding whether to close more.
    private var evicting: Set<Int> = []

    init(limit: Int) {
        self.limit = limit
    }

    enum Decision: Equatable {
        /// Charged: write it now.
        case write
        /// Not charged yet: wait for `admitted`; close these connections
        /// (stalest first) to make room.
        case wait(evict: [Int])
    }

    /// Asks to queue a `bytes`-long response on connection `id`.
    mutating func reserve(id: Int, bytes: Int, now: Instant) -> Decision {
        if waiting.isEmpty && fits(bytes) {
            charge(id: id, bytes: bytes, now: now)
            return .write
        }
        waiting.append((id, bytes))
        return .wait(evict: victims())
    }

    /// The socket took `bytes` of connection `id`'s response. Returns the
    /// waiting connections now charged: they may write.
    mutating func written(id: Int, bytes: Int, now: Instant) -> [Int] {
        guard var c = charges[id] else { return [] }
        let credited = min(bytes, c.bytes)
        c.bytes -= credited
        c.lastProgress = now
        charges[id] = c
        total -= credited
        return admit(now: now)
    }

    /// Connection `id`'s response is done, or the connection closed: credits
    /// what is left of its charge and drops it from the queue. Returns the
    /// waiting connections now charged.
    mutating func remove(id: Int, now: Instant) -> [Int] {
        if let c = charges.removeValue(forKey: id) { total -= c.bytes }
        waiting.removeAll { $0.id == id }
        evicting.remove(id)
        return admit(now: now)
    }

    /// A response larger than the whole budget is let through when it is
    /// alone (nothing else charged): waiting forever would help nobody.
    private func fits(_ bytes: Int) -> Bool {
        total + bytes <= limit || total == 0
    }

    private mutating func charge(id: Int, bytes: Int, now: Instant) {
        charges[id] = Charge(bytes: bytes, lastProgress: now)
        total += bytes
        peak = max(peak, total)
    }

    private mutating func admit(now: Instant) -> [Int] {
        var admitted: [Int] = []
        while let first = waiting.first, fits(first.bytes) {
            waiting.removeFirst()
            charge(id: first.id, bytes: first.bytes, now: now)
            admitted.append(first.id)
        }
        return admitted
    }

    /// Enough charged connections, least recent progress first, that once
    /// they are gone every waiting response fits.
    private mutating func victims() -> [Int] {
        let freed = evicting.reduce(0) { $0 + (charges[$1]?.bytes ?? 0) }
        var needed = total - freed + waiting.reduce(0) { $0 + $1.bytes } - limit
        guard needed > 0 else { return [] }
        var chosen: [Int] = []
        let candidates = charges.filter { !evicting.contains($0.key) }
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
