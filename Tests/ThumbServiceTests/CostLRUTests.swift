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

@Suite struct MemoryCacheTests {
    @Test func countsInsertionsAndEvictions() {
        let cache = MemoryCache<String, [UInt8]>(limitBytes: 100)
        #expect(cache.insert([1], for: "a", cost: 10))
        #expect(!cache.insert([2], for: "b", cost: 11))
        for i in 0..<10 { cache.insert([3], for: "k\(i)", cost: 10) }
        let s = cache.statistics
        #expect(s == .init(entries: 10, bytes: 100, limitBytes: 100, insertions: 11, evictions: 1))
        #expect(cache.get("a") == nil && cache.get("k9") == [3])
        // Shrinking to 50 trims to 50 bytes, and then every entry (10 bytes) is over a tenth of it.
        cache.setLimit(50)
        #expect(cache.statistics.bytes == 0 && cache.statistics.evictions == 11)
    }
}
