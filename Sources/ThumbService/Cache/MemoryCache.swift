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
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    public typealias Statistics = MemoryCacheStatistics

    private struct State {
        var lru: CostLRU<Key, Value>
        var insertions = 0
        var evictions = 0
    }

    private let state: Mutex<State>

    /// `limitBytes` 0 turns the cache off.
    public init(limitBytes: Int) {
        state = Mutex(State(lru: CostLRU(limit: limitBytes)))
    }

    public func get(_ key: Key) -> Value? {
        state.withLock { $0.lru.get(key) }
    }

    /// Inserts with its cost in bytes; returns false when it was too big to keep.
    @discardableResult
    public func insert(_ value: Value, for key: Key, cost: Int) -> Bool {
        state.withLock { s in
            guard let evicted = s.lru.insert(value, for: key, cost: cost) else { return false }
            s.insertions += 1
            s.evictions += evicted.count
            return true
        }
    }

    /// Removes entries whose key matches (purge, or an original found changed).
    @discardableResult
    public func removeAll(where matches: @Sendable (Key) -> Bool) -> Int {
        state.withLock { $0.lru.removeAll(where: matches) }
    }

    /// A new byte limit (config reload); shrinking evicts at once.
    public func setLimit(_ bytes: Int) {
        state.withLock { s in
            s.evictions += s.lru.setLimit(bytes).count
        }
    }

    public var statistics: Statistics {
        state.withLock { s in
            Statistics(entries: s.lru.count, bytes: s.lru.totalCost, limitBytes: s.lru.limit,
                       insertions: s.insertions, evictions: s.evictions)
        }
    }
}
