import Synchronization
import Testing
@testable import ThumbService

@Suite struct CostLRUTests {
    @Test func evictsLeastRecentlyUsedAndKeepsExactCost() {
        var lru = CostLRU<String, Int>(limit: 100)
        for (i, key) in ["a", "b", "c", "d"].enumerated() {
            #expect(lru.insert(i, for: key, cost: 10) != nil)
        }
        #expect(lru.get("a") == 0)                       // a becomes most recent
        var evicted = lru.insert(9, for: "big", cost: 10) ?? []
        #expect(evicted.isEmpty && lru.totalCost == 50)
        for n in 0..<5 { evicted += lru.insert(n, for: "x\(n)", cost: 10) ?? [] }
        #expect(lru.totalCost == 100 && lru.count == 10)
        evicted += lru.insert(7, for: "y", cost: 10) ?? []
        #expect(evicted.map(\.0) == ["b"], "b was least recently used")
        #expect(lru.totalCost == 100 && !lru.contains("b") && lru.contains("a"))
    }

    @Test func refusesEntriesOverATenthOfTheLimit() {
        var lru = CostLRU<String, Int>(limit: 1000)
        #expect(lru.insert(1, for: "ok", cost: 100) != nil)
        #expect(lru.insert(2, for: "huge", cost: 101) == nil)
        #expect(!lru.contains("huge") && lru.totalCost == 100)
        // Replacing an entry with an oversized value drops it rather than keeping stale data.
        #expect(lru.insert(3, for: "ok", cost: 500) == nil)
        #expect(!lru.contains("ok") && lru.totalCost == 0)
    }

    @Test func zeroLimitCachesNothing() {
        var lru = CostLRU<String, Int>(limit: 0)
        #expect(lru.insert(1, for: "a", cost: 0) == nil)
        #expect(lru.count == 0)
    }

    @Test func replacingUpdatesCostAndRecency() {
        var lru = CostLRU<String, Int>(limit: 100)
        lru.insert(1, for: "a", cost: 5)
        lru.insert(2, for: "b", cost: 5)
        lru.insert(3, for: "a", cost: 8)
        #expect(lru.totalCost == 13 && lru.keysByRecency == ["a", "b"] && lru.get("a") == 3)
    }

    @Test func shrinkingEvictsAtOnce() {
        var lru = CostLRU<Int, Int>(limit: 1000)
        for i in 0..<10 { lru.insert(i, for: i, cost: 100) }
        let evicted = lru.setLimit(300)
        // Every entry of cost 100 is now over a tenth of 300, so all go.
        #expect(evicted.count == 10 && lru.totalCost == 0)
        for i in 0..<20 { lru.insert(i, for: i, cost: 30) }
        #expect(lru.totalCost == 300 && lru.count == 10 && lru.keysByRecency.first == 19)
    }

    @Test func removeWhereAndSlotReuse() {
        var lru = CostLRU<String, Int>(limit: 10_000)
        for i in 0..<100 { lru.insert(i, for: "s\(i % 3)/\(i)", cost: 10) }
        #expect(lru.removeAll { $0.hasPrefix("s1/") } == 33)
        #expect(lru.count == 67 && lru.totalCost == 670)
        for i in 0..<33 { lru.insert(i, for: "n\(i)", cost: 10) }
        #expect(lru.count == 100 && lru.totalCost == 1000)
    }

    @Test func staysWithinLimitUnderManyDistinctInserts() {
        var lru = CostLRU<Int, Int>(limit: 50_000)
        var rng = SystemRandomNumberGenerator()
        for i in 0..<1000 {
            lru.insert(i, for: i, cost: Int.random(in: 1...5000, using: &rng))
            #expect(lru.totalCost <= 50_000)
        }
        #expect(lru.keysByRecency.count == lru.count)
    }
}

/// A key that counts the hashing and comparing done with it: the work of
/// a table operation, without timing anything.
private struct CountingKey: Hashable {
    static let operations = Mutex(0)
    let n: Int

    static func == (a: Self, b: Self) -> Bool {
        operations.withLock { $0 += 1 }
        return a.n == b.n
    }

    func hash(into hasher: inout Hasher) {
        Self.operations.withLock { $0 += 1 }
        hasher.combine(n)
    }
}

@Suite(.serialized) struct CostLRUComplexityTests {
    /// Key operations per churn step (a hit on a hot key, then a new key that
    /// evicts the least recently used) with the table full at `size` entries.
    private func operationsPerStep(size: Int) -> Double {
        var lru = CostLRU<CountingKey, Int>(limit: size * 10, entryDivisor: 1)
        for n in 0..<size { lru.insert(n, for: CountingKey(n: n), cost: 10) }
        let hot = CountingKey(n: 0)
        let steps = 5000
        let before = CountingKey.operations.withLock { $0 }
        for n in size..<(size + steps) {
            #expect(lru.get(hot) == 0)
            let evicted = lru.insert(n, for: CountingKey(n: n), cost: 10) ?? []
            #expect(evicted.count == 1 && evicted[0].0 != hot)
        }
        let after = CountingKey.operations.withLock { $0 }
        #expect(lru.count == size && lru.totalCost == size * 10)
        return Double(after - before) / Double(steps)
    }

    /// Eviction is O(1): a full table of 12 288 entries does about the same
    /// key work per step as one of 96 (a search for a victim would do 128
    /// times as much), and the hot key is never the one evicted. Both sizes
    /// fill their dictionary to the same 3/4, where probing costs the same.
    @Test func churnCostsTheSameWorkAtAnySize() {
        let small = operationsPerStep(size: 96)
        let large = operationsPerStep(size: 12_288)
        #expect(large < 2 * small && large < 64, "key operations per step: \(small) at 96 entries, \(large) at 12 288")
    }
}

@Suite struct MemoryCacheTests {
    @Test func countsInsertionsAndEvictions() {
        typealias Cache = MemoryCache<String, [UInt8]>
        let unit = Cache.cost([3], for: "k0")
        #expect(unit > 1, "an entry costs its buffer and its slot, not just its one byte")
        let cache = Cache(limitBytes: 10 * unit)
        #expect(cache.insert([1], for: "a"))
        #expect(!cache.insert([UInt8](repeating: 2, count: unit), for: "b"), "over a tenth of the limit")
        for i in 0..<10 { cache.insert([3], for: "k\(i)") }
        let s = cache.statistics
        #expect(s == .init(entries: 10, bytes: 10 * unit, limitBytes: 10 * unit, insertions: 11, evictions: 1))
        #expect(cache.get("a") == nil && cache.get("k9") == [3])
        // Shrinking to 5 units trims to 5 entries, and then every entry is over a tenth of the limit.
        cache.setLimit(5 * unit)
        #expect(cache.statistics.bytes == 0 && cache.statistics.evictions == 11)
    }

    /// A key's bytes count: a tiny value under a long key is not a tiny entry.
    @Test func aLongKeyCountsInTheCost() {
        let key = String(repeating: "k", count: 2000)
        let cache = MemoryCache<String, [UInt8]>(limitBytes: 1 << 20)
        #expect(cache.insert([1, 2, 3, 4], for: key))
        #expect(cache.statistics.bytes >= 2000 + 4 + CostLRU<String, [UInt8]>.entryOverhead)
    }
}
