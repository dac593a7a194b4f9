import Dispatch
import Synchronization

/// Warms the caches from `POST /prefetch` batches (API.md § Prefetch) behind live
/// traffic: a few items at a time go through the same service as requests,
/// their renders at prefetch priority, so live requests are never refused
/// because of them. Failures only show in the counters.
public final class Prefetcher: Sendable {
    public static let maxWaiting = 10_000

    /// Figures for `/stats` (`prefetch` section).
    public struct Statistics: Equatable, Sendable {
        public var accepted = 0
        public var queued = 0
        public var running = 0
        public var completed = 0
        public var failures = 0
    }

    private struct State {
        var pending = FIFO<ThumbnailRequest>()
        var stats = Statistics()
    }

    private let service: ThumbnailService
    private let concurrency: Int
    private let state = Mutex(State())
    /// Starting items happens here, never inside a completion, so a run of
    /// memory hits cannot recurse.
    private let queue = DispatchQueue(label: "thumbd.prefetch")

    /// `concurrency`: items in progress at once; enough to overlap downloads with renders.
    public init(service: ThumbnailService, concurrency: Int) {
        self.service = service
        self.concurrency = max(1, concurrency)
    }

    /// Queues a whole batch, or none of it when it would pass `maxWaiting` (`503`).
    public func submit(_ items: [ThumbnailRequest]) throws(ServiceError) {
        let accepted = state.withLock { s in
            guard s.pending.count + items.count <= Self.maxWaiting else { return false }
            s.pending.append(contentsOf: items)
            s.stats.accepted += items.count
            return true
        }
        guard accepted else { throw .overloaded }
        queue.async { self.pump() }
    }

    public var statistics: Statistics {
        state.withLock { s in
            var stats = s.stats
            stats.queued = s.pending.count
            return stats
        }
    }

    private func pump() {
        while let item = next() {
            service.thumbnail(item, priority: .prefetch) { [self] result in
                state.withLock { s in
                    s.stats.running -= 1
                    if case .success = result { s.stats.completed += 1 } else { s.stats.failures += 1 }
                }
                queue.async { self.pump() }
            }
        }
    }

    private func next() -> ThumbnailRequest? {
        state.withLock { s in
            guard s.stats.running < concurrency, let item = s.pending.popFirst() else { return nil }
            s.stats.running += 1
            return item
        }
    }
}
