#if canImport(Glibc)
import Glibc
#endif

/// Where thumbd reads the calendar: for facts that must mean the same after a
/// restart or to another machine (when an original was fetched, the HTTP
/// `Date` header, log timestamps). Never for measuring how long something
/// took: the wall clock can step, so intervals come from a monotonic `Clock`
/// (`ContinuousClock` in production). Injected, so a test sets the date.
public protocol WallClock: Sendable {
    /// Time since 1970-01-01T00:00:00Z.
    func sinceEpoch() -> Duration

    /// `sinceEpoch()` in whole seconds, which a clock may read more cheaply:
    /// the `Date` header asks on every response.
    func wholeSecondsSinceEpoch() -> Int64
}

extension WallClock {
    public func wholeSecondsSinceEpoch() -> Int64 { sinceEpoch().components.seconds }

    /// `sinceEpoch()` in seconds, as the disk store's metadata keeps it.
    public var secondsSince1970: Double { sinceEpoch().inSeconds }
}

/// The system's calendar time (`CLOCK_REALTIME`).
public struct SystemWallClock: WallClock {
    public init() {}

    public func sinceEpoch() -> Duration {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }

    /// `time(2)`: a read of the kernel's coarse clock, no arithmetic.
    public func wholeSecondsSinceEpoch() -> Int64 { Int64(time(nil)) }
}
