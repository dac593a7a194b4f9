import Synchronization

/// The service's own counters for `/stats` (SPEC §5); caches, queue and the
/// HTTP server report theirs.
struct ServiceCounters: Sendable {
    var memoryHits = 0
    var memoryMisses = 0
    var originFetches = 0
    var originFailures = 0
    var originBytes = 0
    var originInFlight = 0
    var originCoalesced = 0
    var renderCompleted = 0
    var renderFailures = 0
    var renderCoalesced = 0
    var renderRejected = 0
}

/// `ServiceCounters` behind a lock, shared by reference between the service
/// and its origin loader.
final class SharedCounters: Sendable {
    private let mutex = Mutex(ServiceCounters())

    func withLock<R: Sendable>(_ body: (inout ServiceCounters) -> R) -> R {
        mutex.withLock { body(&$0) }
    }
}
