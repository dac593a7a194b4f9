import Synchronization

/// A monotonic `Clock` that moves only when a test says so (`advance(by:)`):
/// timeouts, ages and expiries are checked at exact instants, without
/// sleeping and without depending on how loaded the machine is. Sleepers wake
/// when an advance reaches their deadline.
public final class ManualClock: Clock, Sendable {
    public struct Instant: InstantProtocol, CustomStringConvertible {
        /// Time since the clock's zero.
        public var offset: Duration

        public init(offset: Duration) { self.offset = offset }

        /// The clock's zero; `.zero + .seconds(5)` reads as "at 5 s".
        public static var zero: Instant { Instant(offset: .zero) }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        public static func + (lhs: Instant, rhs: Duration) -> Instant { lhs.advanced(by: rhs) }
        public var description: String { "\(offset)" }
    }

    private struct Sleeper {
        var id: Int
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Instant
        var sleepers: [Sleeper] = []
        var nextID = 0
    }

    private let state: Mutex<State>

    public init(now: Instant = .zero) {
        state = Mutex(State(now: now))
    }

    public var now: Instant { state.withLock { $0.now } }

    public var minimumResolution: Duration { .nanoseconds(1) }

    /// How many sleepers wait for the clock to move: a test sees that a timer
    /// was (or was not) set before it advances past it.
    public var sleepers: Int { state.withLock { $0.sleepers.count } }

    /// Moves the clock forward and wakes every sleeper whose deadline it reached.
    public func advance(by duration: Duration) {
        precondition(duration >= .zero, "a monotonic clock does not go back")
        let due: [Sleeper] = state.withLock { s in
            s.now = s.now.advanced(by: duration)
            let now = s.now
            defer { s.sleepers.removeAll { $0.deadline <= now } }
            return s.sleepers.filter { $0.deadline <= now }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { s in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow: Bool = state.withLock { s in
                    if deadline <= s.now || Task.isCancelled { return true }
                    s.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let cancelled = state.withLock { s -> Sleeper? in
                guard let i = s.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return s.sleepers.remove(at: i)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }
}
