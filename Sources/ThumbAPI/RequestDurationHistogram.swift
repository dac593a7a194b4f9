import ThumbService
import ThumbJSON
import Synchronization

/// Request durations in seconds by where the answer came from, for
/// `thumbd_request_duration_seconds` on `/metrics`.
///
/// Every outcome is always exposed, zeros included: a series that appears only
/// after its first observation makes `rate()` and dashboards miss its start,
/// and four outcomes cost a handful of lines.
public final class RequestDurationHistogram: Sendable {
    /// The response's `X-Cache` value (API.md § Output); `none` when it has none
    /// (errors, `/stats`, `/healthz`, …). The raw value is the `outcome` label.
    public enum Outcome: String, CaseIterable, Sendable {
        case memory, disk, origin, none

        /// The outcome a response's `X-Cache` header names; anything else is `none`.
        public init(xCache: String?) {
            self = xCache.flatMap(Outcome.init(rawValue:)) ?? .none
        }

        public init(_ cache: CacheOutcome?) {
            self = Outcome(xCache: cache?.rawValue)
        }
    }

    /// Upper bounds in seconds. A memory hit answers in well under a
    /// millisecond, a render from disk in milliseconds to tens of them, and a
    /// download in tenths to seconds up to the fetch timeout; the bounds span
    /// all three so each outcome's quantiles come out of distinct buckets.
    public static let defaultBounds: [Double] =
        [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// One outcome's figures at one moment.
    public struct Series: Equatable, Sendable {
        /// Observations at or below each bound, in the order of `Snapshot.bounds`;
        /// the `+Inf` bucket is `count`.
        public var cumulativeCounts: [Int]
        public var count: Int
        /// Seconds.
        public var sum: Double
    }

    /// A consistent copy of every outcome's figures.
    public struct Snapshot: Equatable, Sendable {
        /// Ascending upper bounds in seconds, without `+Inf`.
        public let bounds: [Double]
        let series: [Outcome: Series]

        public subscript(outcome: Outcome) -> Series {
            series[outcome] ?? Series(cumulativeCounts: bounds.map { _ in 0 }, count: 0, sum: 0)
        }
    }

    private struct Tally {
        // Per bucket, not cumulative, so an observation touches one slot; the last slot is +Inf.
        var counts: [Int]
        var sum: Double = 0
    }

    public let bounds: [Double]
    private let tallies: Mutex<[Outcome: Tally]>

    public init(bounds: [Double] = RequestDurationHistogram.defaultBounds) {
        precondition(bounds.allSatisfy(\.isFinite) && zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 },
                     "bounds must be finite and strictly ascending")
        self.bounds = bounds
        let empty = Tally(counts: Array(repeating: 0, count: bounds.count + 1))
        tallies = Mutex(Dictionary(uniqueKeysWithValues: Outcome.allCases.map { ($0, empty) }))
    }

    /// Records one request that took `seconds`. A non-finite duration is a
    /// clock bug upstream and is dropped rather than poisoning `_sum` forever.
    public func observe(seconds: Double, outcome: Outcome) {
        guard seconds.isFinite else { return }
        let seconds = max(0, seconds)
        // `le` is inclusive: an observation equal to a bound belongs to that bucket.
        let slot = bounds.firstIndex { seconds <= $0 } ?? bounds.count
        tallies.withLock {
            $0[outcome]!.counts[slot] += 1
            $0[outcome]!.sum += seconds
        }
    }

    public func snapshot() -> Snapshot {
        let copy = tallies.withLock { $0 }
        var series: [Outcome: Series] = [:]
        for (outcome, tally) in copy {
            var running = 0
            let cumulative = tally.counts.map { running += $0; return running }
            series[outcome] = Series(cumulativeCounts: Array(cumulative.dropLast()),
                                     count: cumulative.last ?? 0, sum: tally.sum)
        }
        return Snapshot(bounds: bounds, series: series)
    }
}
