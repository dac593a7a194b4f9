import Testing
import ThumbClock

/// The server's clock does `Duration` arithmetic by hand (one division, one
/// multiply, on `Duration`'s frozen layout): it must agree with the standard
/// library's, for the timeouts it meets and for the odd ones.
@Suite struct MonotonicClockTests {
    static let durations: [Duration] = [
        .zero, .nanoseconds(1), .milliseconds(1500), .seconds(10), .seconds(30), .seconds(86_400 * 365),
        .seconds(0.4), .nanoseconds(-1), .seconds(-30), .seconds(Int64.max / 4_000_000_000),
    ]

    @Test(arguments: durations) func advancingMatchesTheStandardLibrary(_ duration: Duration) {
        let start = MonotonicClock.Instant(nanoseconds: 1_000_000_000_000)
        let (seconds, attoseconds) = duration.components
        let expected = 1_000_000_000_000 + seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        #expect(start.advanced(by: duration).nanoseconds == expected)
        #expect(start.duration(to: start.advanced(by: duration)) == .nanoseconds(expected - 1_000_000_000_000))
    }

    @Test func readingsGoForward() {
        let clock = MonotonicClock()
        let first = clock.now
        let second = clock.now
        #expect(first <= second && first.duration(to: second) >= .zero)
    }
}
