import Synchronization
import ThumbClock

/// A calendar the test sets and moves by hand, backwards too (a wall clock
/// can step): fetch times and `Date` headers at exact dates.
public final class ManualWallClock: WallClock {
    private let time: Mutex<Duration>

    /// `secondsSince1970`: where the calendar starts (default 2023-11-14T22:13:20Z).
    public init(secondsSince1970: Double = 1_700_000_000) {
        time = Mutex(.seconds(secondsSince1970))
    }

    public func sinceEpoch() -> Duration { time.withLock { $0 } }

    public func advance(by duration: Duration) { time.withLock { $0 += duration } }

    public func set(secondsSince1970: Double) { time.withLock { $0 = .seconds(secondsSince1970) } }
}
