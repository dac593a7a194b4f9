import Synchronization
import ThumbRender

/// The service's own counters for `/stats` (Statistics.md); caches, queue and the
/// HTTP server report theirs.
public struct ServiceCounters: Equatable, Sendable {
    public var memoryHits = 0
    public var memoryMisses = 0
    public var originFetches = 0
    public var originFailures = 0
    public var originBytes = 0
    public var originInFlight = 0
    public var originCoalesced = 0
    public var renderCompleted = 0
    public var renderFailures = 0
    public var renderCoalesced = 0
    public var renderRejected = 0
    /// Renders skipped because every client waiting for them had gone.
    public var renderAbandoned = 0
    /// Originals whose facts (`OriginalFacts`) were computed from their pixels (`info.computed`).
    public var factsComputed = 0
    /// `/info` requests, a batch counting once (`info.requests`).
    public var infoRequests = 0
    /// Items of `POST /info` batches (`info.batchItems`).
    public var infoBatchItems = 0
    /// Sources of batch items whose work stopped because nobody waited any more (`info.abandoned`).
    public var infoAbandoned = 0
    /// `POST /info` batches answered as a stream of lines (`info.streamed`), one cut short included.
    public var infoStreamed = 0
    /// `q=auto` searches run (`quality.autoSearches`): one per source and
    /// lossy format, unless its result was not kept.
    public var autoSearches = 0
}

/// `ServiceCounters` behind a lock, shared by reference between the service
/// and its origin loader.
final class SharedCounters: Sendable {
    private let mutex = Mutex(ServiceCounters())
    /// Kept apart from the lock: a memory hit, the hot path, counts with one
    /// atomic add.
    private let memoryHits = Atomic<Int>(0)
    /// Likewise for `GET /info`, whose memory hits are its hot path.
    private let infoRequests = Atomic<Int>(0)

    func withLock<R: Sendable>(_ body: (inout ServiceCounters) -> R) -> R {
        mutex.withLock { body(&$0) }
    }

    func countMemoryHit() { memoryHits.add(1, ordering: .relaxed) }

    func countInfoRequest() { infoRequests.add(1, ordering: .relaxed) }

    /// Every counter, read now.
    var snapshot: ServiceCounters {
        var counters = mutex.withLock { $0 }
        counters.memoryHits = memoryHits.load(ordering: .relaxed)
        counters.infoRequests = infoRequests.load(ordering: .relaxed)
        return counters
    }
}
