#if canImport(Glibc)
import Glibc
#endif

/// `ContinuousClock`'s time (on Linux `CLOCK_BOOTTIME`: monotonic, counting
/// suspension), in instants that are a plain count of nanoseconds.
///
/// For the HTTP hot path, where the clock is read and deadlines are moved
/// several times per request. `ContinuousClock.Instant` belongs to the
/// standard library, built for library evolution: outside it its size is
/// unknown until run time, so every struct holding one is copied and
/// destroyed through value witnesses and runtime metadata (measured: about
/// 40 % more instructions per keep-alive request). And `Duration`'s own
/// arithmetic is 128-bit calls into the standard library; here reading the
/// clock is `clock_gettime` and a multiply, a deadline an integer addition.
public struct MonotonicClock: Clock {
    public struct Instant: InstantProtocol {
        /// Since the clock's zero (the boot).
        public var nanoseconds: Int64

        @inlinable public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

        @inlinable public func advanced(by duration: Duration) -> Instant {
            Instant(nanoseconds: nanoseconds &+ MonotonicClock.wholeNanoseconds(duration))
        }

        @inlinable public func duration(to other: Instant) -> Duration {
            MonotonicClock.duration(nanoseconds: other.nanoseconds &- nanoseconds)
        }

        @inlinable public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
    }

    @inlinable public init() {}

    @inlinable public var now: Instant {
        var ts = timespec()
        clock_gettime(CLOCK_BOOTTIME, &ts)
        return Instant(nanoseconds: Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec))
    }

    public var minimumResolution: Duration { .nanoseconds(1) }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await ContinuousClock().sleep(for: now.duration(to: deadline), tolerance: tolerance)
    }

    /// `duration` in whole nanoseconds (toward zero). `Duration` is frozen
    /// as 128-bit attoseconds, low word first: a non-negative one under
    /// 2^63 ns divides with one 128-by-64-bit division; anything else takes
    /// the standard library's way.
    @inlinable static func wholeNanoseconds(_ duration: Duration) -> Int64 {
        let (low, high) = unsafeBitCast(duration, to: (UInt64, Int64).self)
        if high >= 0 && high < 500_000_000 {
            return Int64(UInt64(1_000_000_000).dividingFullWidth((UInt64(high), low)).quotient)
        }
        let (seconds, attoseconds) = duration.components
        return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
    }

    /// `.nanoseconds(n)` with one full-width multiply, built in the same layout.
    @inlinable static func duration(nanoseconds n: Int64) -> Duration {
        let product = n.multipliedFullWidth(by: 1_000_000_000)
        return unsafeBitCast((product.low, product.high), to: Duration.self)
    }
}
