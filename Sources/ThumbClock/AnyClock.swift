/// Any monotonic `Clock` measured in `Duration`, behind one non-generic type:
/// for classes that cross module boundaries (the render queue, the negative
/// cache), which a generic parameter would spread through every type that
/// holds them. Pure structs on a hot path (the connection's state machine)
/// stay generic instead, so they specialize and pay no indirect call.
///
/// Instants are offsets from the moment the wrapper was made; they compare
/// only with instants of the same wrapper.
public struct AnyClock: Clock {
    public struct Instant: InstantProtocol {
        /// Time since the wrapper was made, on the wrapped clock.
        public var offset: Duration

        public init(offset: Duration) { self.offset = offset }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let read: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration, Duration?) async throws -> Void
    public let minimumResolution: Duration

    public init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        read = { origin.duration(to: clock.now) }
        sleeper = { offset, tolerance in try await clock.sleep(until: origin.advanced(by: offset), tolerance: tolerance) }
        minimumResolution = clock.minimumResolution
    }

    public var now: Instant { Instant(offset: read()) }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await sleeper(deadline.offset, tolerance)
    }
}
