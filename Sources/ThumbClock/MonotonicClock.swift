#if canImport(Glibc)
import Glibc
#endif

/// `ContinuousClock`'s time (on Linux `CLOCK_BOOTTIME`: monotonic, counting
/// suspension), in instants whose layout is known at compile time.
///
/// `ContinuousClock.Instant` belongs to the standard library, which is built
/// for library evolution: outside it, its size is unknown until run time, so
/// every struct holding one (a connection's state machine, its actions, the
/// pending-bytes ledger's charges) is copied and destroyed through value
/// witnesses and runtime metadata. Measured on the keep-alive path that cost
/// about 40 % more instructions per request. These instants are a `Duration`
/// since the clock's zero, so the machine's arithmetic (a deadline is an
/// instant plus a `Duration`) is an addition, never a division.
public struct MonotonicClock: Clock {
    public struct Instant: InstantProtocol {
        /// Since the clock's zero (the boot).
        public var offset: Duration

        @inlinable public init(offset: Duration) { self.offset = offset }

        @inlinable public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        @inlinable public func duration(to other: Instant) -> Duration { other.offset - offset }
        @inlinable public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    @inlinable public init() {}

    @inlinable public var now: Instant {
        var ts = timespec()
        clock_gettime(CLOCK_BOOTTIME, &ts)
        return Instant(offset: Duration(secondsComponent: Int64(ts.tv_sec),
                                        attosecondsComponent: Int64(ts.tv_nsec) &* 1_000_000_000))
    }

    public var minimumResolution: Duration { .nanoseconds(1) }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await ContinuousClock().sleep(for: now.duration(to: deadline), tolerance: tolerance)
    }
}
