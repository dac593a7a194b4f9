import Synchronization

/// The service's own counters for `/stats` (README § Statistics); caches, queue and the
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
}

/// `ServiceCounters` behind a lock, shared by reference between the service
/// and its origin loader.
final class SharedCounters: Sendable {
    private let mutex = Mutex(ServiceCounters())

    func withLock<R: Sendable>(_ body: (inout ServiceCounters) -> R) -> R {
        mutex.withLock { body(&$0) }
    }
}
