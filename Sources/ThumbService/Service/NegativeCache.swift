import Foundation
import Synchronization
import ThumbClock

/// Remembers sources that failed for `origin.negativeCacheSeconds` and replays
/// the same error (SourcesAndLimits.md), so a storm of requests for a broken image does
/// not reach the origin again. Timeouts are never remembered.
///
/// Bounded by bytes, every byte of an entry counted (its URL, its message
/// and its slot in the table): a hostile client can name endless distinct
/// failing URLs of 2 KB, and a count bound of 100 000 let them hold 290 MiB
/// under a long TTL. Past the bound the least recently asked for go first
/// (forgetting early costs a refetch, nothing worse).
final class NegativeCache: Sendable {
    private struct Remembered {
        let error: ServiceError
        let expires: AnyClock.Instant
    }

    private struct Table {
        var entries: CostLRU<String, Remembered>
        /// The count at which expired entries are swept out; doubles with the
        /// table, so sweeping costs O(1) per remembered failure.
        var sweepAt = 1024
    }

    /// 16 MiB by default (SourcesAndLimits.md § Choices; no configuration key):
    /// about 7 000 failures of 2 KB URLs, 50 000 of short ones.
    static let defaultLimitBytes = 16 << 20

    private let table: Mutex<Table>
    /// Worker crashes per source, each entry living one TTL from the first:
    /// the third within it has the source refused (SPEC §16), so a crafted
    /// image cannot make every request cost a worker. Bounded like the table.
    private let crashes: Mutex<CostLRU<String, Crashes>>
    private let ttl: Mutex<Duration>

    private struct Crashes {
        var count: Int
        let expires: AnyClock.Instant
    }

    /// Crashes of one source within `origin.negativeCacheSeconds` that get it refused.
    static let crashesBeforeRefusal = 3
    private let clock: AnyClock

    /// `clock`: monotonic, so a wall clock stepped backwards cannot make a
    /// failure be remembered for longer than its TTL.
    init<C: Clock>(ttl: Duration, clock: C = ContinuousClock(), limitBytes: Int = NegativeCache.defaultLimitBytes)
    where C.Duration == Duration {
        self.ttl = Mutex(ttl)
        self.clock = AnyClock(clock)
        table = Mutex(Table(entries: CostLRU(limit: limitBytes)))
        crashes = Mutex(CostLRU(limit: limitBytes / 4))
    }

    func remember(_ url: String, _ error: ServiceError) {
        let ttl = ttl.withLock { $0 }
        guard ttl > .zero else { return }
        if case .workerCrashed(let message) = error {
            guard let refusal = countCrash(url, message, ttl: ttl) else { return }
            return insert(url, refusal, ttl: ttl)
        }
        guard error.lifetime != .momentary else { return }
        insert(url, error, ttl: ttl)
    }

    /// The refusal a crash of `url` earns: nil until it is the third within one TTL.
    private func countCrash(_ url: String, _ message: String, ttl: Duration) -> ServiceError? {
        let t = clock.now
        let count = crashes.withLock { crashes -> Int in
            var entry = crashes.get(url).flatMap { $0.expires > t ? $0 : nil } ?? Crashes(count: 0, expires: t.advanced(by: ttl))
            entry.count += 1
            if entry.count >= Self.crashesBeforeRefusal {
                crashes.remove(url)
            } else {
                _ = crashes.insert(entry, for: url, cost: url.heapBytes + Self.entryOverhead)
            }
            return entry.count
        }
        guard count >= Self.crashesBeforeRefusal else { return nil }
        return .corruptImage("renders of this source crashed their worker \(count) times within "
                             + "origin.negativeCacheSeconds; the last \(message)")
    }

    private func insert(_ url: String, _ error: ServiceError, ttl: Duration) {
        let t = clock.now
        let cost = Self.cost(url, error)
        table.withLock { table in
            _ = table.entries.insert(Remembered(error: error, expires: t.advanced(by: ttl)), for: url, cost: cost)
            guard table.entries.count >= table.sweepAt else { return }
            _ = table.entries.removeAll { $1.expires <= t }
            table.sweepAt = max(1024, table.entries.count * 2)
        }
    }

    func lookup(_ url: String) -> ServiceError? {
        let t = clock.now
        return table.withLock { table in
            guard let entry = table.entries.get(url) else { return nil }
            guard entry.expires > t else {
                table.entries.remove(url)
                return nil
            }
            return entry.error
        }
    }

    /// Forgets one source; true when a failure was remembered.
    func forget(_ url: String) -> Bool {
        crashes.withLock { _ = $0.remove(url) }
        return table.withLock { $0.entries.remove(url) != nil }
    }

    /// Forgets every source whose URL starts with `prefix`; how many were remembered.
    func forgetAll(startingWith prefix: String) -> Int {
        table.withLock { table in table.entries.removeAll { (url: String) in url.utf8.starts(with: prefix.utf8) } }
    }

    func setTTL(_ ttl: Duration) {
        self.ttl.withLock { $0 = ttl }
    }

    /// Failures remembered now, expired ones not yet swept included.
    var count: Int { table.withLock { $0.entries.count } }

    /// The bytes counted against the bound.
    var bytes: Int { table.withLock { $0.entries.totalCost } }

    /// The URL, the error's message and the entry's slot.
    static func cost(_ url: String, _ error: ServiceError) -> Int {
        url.heapBytes + error.heapBytes + entryOverhead
    }

    /// The table's own bytes per entry (`CostLRU.entryOverhead`).
    static var entryOverhead: Int { CostLRU<String, Remembered>.entryOverhead }
}

private extension ServiceError {
    /// The message string a case carries; the fixed texts are literals, on no heap.
    var heapBytes: Int {
        switch self {
        case .badRequest(let m), .forbiddenSource(let m), .unsupportedFormat(let m), .imageTooLarge(let m),
             .corruptImage(let m), .internalError(let m), .originError(let m), .originTimeout(let m),
             .workerCrashed(let m), .workerFiltered(let m), .outOfMemory(let m):
            m.heapBytes
        case .sourceNotFound, .sourceTooLarge, .renderTimedOut, .overloaded:
            0
        }
    }
}
