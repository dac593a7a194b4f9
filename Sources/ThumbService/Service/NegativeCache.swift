import Foundation
import Synchronization
import ThumbClock

/// Remembers sources that failed for `origin.negativeCacheSeconds` and replays
/// the same error (SourcesAndLimits.md), so a storm of requests for a broken image does
/// not reach the origin again. Timeouts are never remembered.
final class NegativeCache: Sendable {
    private struct Table {
        var entries: [String: (error: ServiceError, expires: AnyClock.Instant)] = [:]
        var sweepAt = 1024
    }

    /// A hostile client can name endless distinct failing URLs; past this many
    /// entries the oldest half is dropped (forgetting early costs a refetch, nothing worse).
    static let capacity = 100_000

    private let table = Mutex(Table())
    private let ttl: Mutex<Duration>
    private let clock: AnyClock

    /// `clock`: monotonic, so a wall clock stepped backwards cannot make a
    /// failure be remembered for longer than its TTL.
    init<C: Clock>(ttl: Duration, clock: C = ContinuousClock()) where C.Duration == Duration {
        self.ttl = Mutex(ttl)
        self.clock = AnyClock(clock)
    }

    func remember(_ url: String, _ error: ServiceError) {
        let ttl = ttl.withLock { $0 }
        guard error.lifetime != .momentary, ttl > .zero else { return }
        let t = clock.now
        table.withLock { table in
            table.entries[url] = (error, t.advanced(by: ttl))
            guard table.entries.count >= table.sweepAt else { return }
            table.entries = table.entries.filter { $0.value.expires > t }
            if table.entries.count >= Self.capacity {
                let keep = table.entries.sorted { $0.value.expires > $1.value.expires }.prefix(Self.capacity / 2)
                table.entries = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
            }
            table.sweepAt = max(1024, table.entries.count * 2)
        }
    }

    func lookup(_ url: String) -> ServiceError? {
        let t = clock.now
        return table.withLock { table in
            guard let entry = table.entries[url] else { return nil }
            guard entry.expires > t else {
                table.entries[url] = nil
                return nil
            }
            return entry.error
        }
    }

    /// Forgets one source; true when a failure was remembered.
    func forget(_ url: String) -> Bool {
        table.withLock { $0.entries.removeValue(forKey: url) != nil }
    }

    func setTTL(_ ttl: Duration) {
        self.ttl.withLock { $0 = ttl }
    }
}
