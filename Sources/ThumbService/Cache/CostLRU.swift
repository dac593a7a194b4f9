/// A least-recently-used map whose limit is a total cost, kept exactly: every
/// insert trims until the total fits, and an entry costing more than
/// `limit / entryDivisor` is refused (by default a tenth: one item must not
/// flush most of the cache).
///
/// Not thread-safe; `MemoryCache` wraps it in a lock. O(1) get/insert/evict via
/// an intrusive doubly linked list over slot indices.
package struct CostLRU<Key: Hashable, Value> {
    private struct Slot {
        var key: Key
        /// nil once the slot is freed, so an evicted bitmap's memory goes at once.
        var value: Value?
        var cost: Int
        var prev: Int
        var next: Int
    }

    private var slots: [Slot] = []
    private var free: [Int] = []
    private var index: [Key: Int] = [:]
    private var head = -1   // most recently used
    private var tail = -1   // least recently used

    package private(set) var limit: Int
    package private(set) var totalCost = 0
    private let entryDivisor: Int
    package var count: Int { index.count }

    package init(limit: Int, entryDivisor: Int = 10) {
        precondition(limit >= 0 && entryDivisor >= 1)
        self.limit = limit
        self.entryDivisor = entryDivisor
    }

    /// Bytes one entry takes in the LRU's own tables, beyond what its key and
    /// value keep on the heap: its slot in `slots` (key and value inline,
    /// cost, links) and its bucket in `index` (key, slot number, a bit of
    /// metadata). Both tables grow by doubling, so each is counted at the
    /// most it can be per entry: `slots` twice full, `index` (at most 3/4
    /// full) 8/3 buckets per entry. A cache that bounds memory adds this to
    /// every entry's cost, so its limit bounds what it really holds.
    ///
    /// Measured by `CacheFootprintMeasurement` (RSS growth over 50 000
    /// entries, against the bytes counted; the figures are in that file).
    package static var entryOverhead: Int {
        let slot = MemoryLayout<Slot>.stride
        let bucket = MemoryLayout<Key>.stride + MemoryLayout<Int>.stride + 1
        return 2 * slot + bucket * 8 / 3
    }

    /// The largest cost a single entry may have.
    package var maxEntryCost: Int { limit / entryDivisor }

    /// Looks up and marks as most recently used.
    package mutating func get(_ key: Key) -> Value? {
        guard let i = index[key] else { return nil }
        moveToFront(i)
        return slots[i].value
    }

    package func contains(_ key: Key) -> Bool { index[key] != nil }

    /// The least recently used key: the next to be evicted.
    package var leastRecentKey: Key? { tail >= 0 ? slots[tail].key : nil }

    /// Inserts or replaces; returns the evicted entries (for statistics), or nil
    /// when the entry was refused for its size.
    @discardableResult
    package mutating func insert(_ value: Value, for key: Key, cost: Int) -> [(Key, Value)]? {
        precondition(cost >= 0)
        guard cost <= maxEntryCost, limit > 0 else {
            if let i = index[key] { unlink(i) }
            return nil
        }
        if let i = index[key] {
            totalCost += cost - slots[i].cost
            slots[i].value = value
            slots[i].cost = cost
            moveToFront(i)
        } else {
            let slot = Slot(key: key, value: value, cost: cost, prev: -1, next: -1)
            let i: Int
            if let reused = free.popLast() {
                slots[reused] = slot
                i = reused
            } else {
                slots.append(slot)
                i = slots.count - 1
            }
            index[key] = i
            totalCost += cost
            linkFront(i)
        }
        return trim()
    }

    /// Removes one key; returns its value.
    @discardableResult
    package mutating func remove(_ key: Key) -> Value? {
        guard let i = index[key] else { return nil }
        let value = slots[i].value
        unlink(i)
        return value
    }

    /// Removes every entry whose key matches; returns how many.
    package mutating func removeAll(where matches: (Key) -> Bool) -> Int {
        let doomed = index.keys.filter(matches)
        for key in doomed { remove(key) }
        return doomed.count
    }

    /// Removes every entry whose key and value match; returns how many.
    package mutating func removeAll(where matches: (Key, Value) -> Bool) -> Int {
        var removed = 0
        var i = head
        while i >= 0 {
            let next = slots[i].next
            if matches(slots[i].key, slots[i].value!) {
                unlink(i)
                removed += 1
            }
            i = next
        }
        return removed
    }

    /// Changes the limit; shrinking evicts at once. Returns what was evicted.
    package mutating func setLimit(_ newLimit: Int) -> [(Key, Value)] {
        precondition(newLimit >= 0)
        limit = newLimit
        var evicted = trim()
        // Entries that were fine under the old limit may now be over a tenth of it.
        var i = head
        while i >= 0 {
            let next = slots[i].next
            if slots[i].cost > maxEntryCost {
                    evicted.append((slots[i].key, slots[i].value!))
                unlink(i)
            }
            i = next
        }
        return evicted
    }

    /// Keys from most to least recently used (for tests and diagnostics).
    package var keysByRecency: [Key] {
        var keys: [Key] = []
        var i = head
        while i >= 0 {
            keys.append(slots[i].key)
            i = slots[i].next
        }
        return keys
    }

    private mutating func trim() -> [(Key, Value)] {
        var evicted: [(Key, Value)] = []
        while totalCost > limit, tail >= 0 {
            evicted.append((slots[tail].key, slots[tail].value!))
            unlink(tail)
        }
        return evicted
    }

    private mutating func linkFront(_ i: Int) {
        slots[i].prev = -1
        slots[i].next = head
        if head >= 0 { slots[head].prev = i }
        head = i
        if tail < 0 { tail = i }
    }

    private mutating func detach(_ i: Int) {
        let (p, n) = (slots[i].prev, slots[i].next)
        if p >= 0 { slots[p].next = n } else { head = n }
        if n >= 0 { slots[n].prev = p } else { tail = p }
    }

    private mutating func moveToFront(_ i: Int) {
        guard head != i else { return }
        detach(i)
        linkFront(i)
    }

    private mutating func unlink(_ i: Int) {
        detach(i)
        totalCost -= slots[i].cost
        slots[i].value = nil
        index[slots[i].key] = nil
        free.append(i)
    }
}
