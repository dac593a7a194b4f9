import Synchronization

/// Figures of a memory cache for `/stats`.
public struct MemoryCacheStatistics: Equatable, Sendable {
    public var entries = 0
    public var bytes = 0
    public var limitBytes = 0
    public var insertions = 0
    public var evictions = 0
}

/// The memory cache of prepared bitmaps and encoded renditions (Statistics.md
/// `memoryCache`): one cost-bounded LRU behind a lock, so any thread may read
/// it and a hit never needs a worker.
///
/// An entry's cost is every byte it holds: what its key and value keep on the
/// heap (pixels or encoded bytes, but also the URL, digest and header
/// strings) and its slot in the LRU's own tables (`CostLRU.entryOverhead`).
/// Counting pixels alone let 80 000 1×1 variants of a 2 KB URL hold 190 MiB
/// while `/stats` said 320 KB.
final class MemoryCache<Key: Hashable & Sendable & HeapFootprint, Value: Sendable & HeapFootprint>: Sendable {
    typealias Statistics = MemoryCacheStatistics

    private struct State {
        var lru: CostLRU<Key, Value>
        var insertions = 0
        var evictions = 0
    }

    private let state: Mutex<State>

    /// `limitBytes` 0 turns the cache off.
    init(limitBytes: Int) {
        state = Mutex(State(lru: CostLRU(limit: limitBytes)))
    }

    /// What `value` under `key` costs: both their heap bytes and the entry's slot.
    static func cost(_ value: Value, for key: Key) -> Int {
        key.heapBytes + value.heapBytes + CostLRU<Key, Value>.entryOverhead
    }

    func get(_ key: Key) -> Value? {
        state.withLock { $0.lru.get(key) }
    }

    /// Inserts at its cost (`cost(_:for:)`); returns false when it was too big to keep.
    @discardableResult
    func insert(_ value: Value, for key: Key) -> Bool {
        let cost = Self.cost(value, for: key)
        return state.withLock { s in
            guard let evicted = s.lru.insert(value, for: key, cost: cost) else { return false }
            s.insertions += 1
            s.evictions += evicted.count
            return true
        }
    }

    /// Removes entries whose key matches (purge, or an original found changed).
    @discardableResult
    func removeAll(where matches: @Sendable (Key) -> Bool) -> Int {
        state.withLock { $0.lru.removeAll(where: matches) }
    }

    /// A new byte limit (config reload); shrinking evicts at once.
    func setLimit(_ bytes: Int) {
        state.withLock { s in
            s.evictions += s.lru.setLimit(bytes).count
        }
    }

    var statistics: Statistics {
        state.withLock { s in
            Statistics(entries: s.lru.count, bytes: s.lru.totalCost, limitBytes: s.lru.limit,
                       insertions: s.insertions, evictions: s.evictions)
        }
    }
}
