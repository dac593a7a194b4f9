/// A moment on an injected clock by which work must end: a render job's
/// `limits.maxRenderSeconds`, counted on the clock the service was given, so
/// a test that moves a manual clock moves every deadline with it.
///
/// It leaves its clock only as the time that remains: a worker process gets
/// that span and makes a deadline on its own clock; a codec turns it into C
/// time (`RenderDeadline`) at the call into the library.
public struct Deadline: Sendable {
    public let clock: AnyClock
    public let instant: AnyClock.Instant

    /// `duration` from now on `clock`.
    public init(after duration: Duration, on clock: AnyClock) {
        self.clock = clock
        instant = clock.now.advanced(by: duration)
    }

    /// Time left; zero or less once passed.
    public var remaining: Duration { clock.now.duration(to: instant) }

    public var hasPassed: Bool { remaining <= .zero }
}
