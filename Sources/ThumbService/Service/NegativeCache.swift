import Foundation
import Synchronization

/// Remembers sources that failed for `origin.negativeCacheSeconds` and replays
/// the same error (SourcesAndLimits.md), so a storm of requests for a broken image does
/// not reach the origin again. Timeouts are never remembered.
final class NegativeCache: Sendable {
    private struct Table {
        var entries: [String: (error: ServiceError, expires: Double)] = [:]
        var sweepAt = 1024
    }

    /// A hostile client can name endless distinct failing URLs; past this many
    /// entries the oldest half is dropped (forgetting early costs a refetch, nothing worse).
    static let capacity = 100_000

    private let table = Mutex(Table())
    private let ttl: Mutex<Double>
    private let now: @Sendable () -> Double

    /// `now`: seconds on a monotonic clock, so a wall clock stepped backwards
    /// cannot make a failure be remembered for longer than its TTL.
    init(ttlSeconds: Double, now: @escaping @Sendable () -> Double = { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }) {
        ttl = Mutex(ttlSeconds)
        self.now = now
    }

    func remember(_ url: String, _ error: ServiceError) {
        let seconds = ttl.withLock { $0 }
        guard error.lifetime != .momentary, seconds > 0 else { return }
        let t = now()
        table.withLock { table in
            table.entries[url] = (error, t + seconds)
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
        let t = now()
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

    func setTTL(_ seconds: Double) {
        ttl.withLock { $0 = seconds }
    }
}
