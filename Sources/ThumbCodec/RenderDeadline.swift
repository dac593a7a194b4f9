import CThumbCodec

/// When a render must stop (Configuration.md `limits.maxRenderSeconds`).
///
/// Decoders and encoders check it at every row, scan or encoder callback their
/// library offers and then throw `CodecError.deadlineExceeded`. Where a
/// library has no such hook the check happens before and after the call:
/// WebP and HEIF/AVIF decodes (the whole image is decoded in one call, so the
/// deadline is seen at the first row read) and the AVIF encoder (checked only
/// before it starts).
public struct RenderDeadline: Sendable {
    let raw: thumbd_deadline

    /// No deadline: the work always runs to the end.
    public static let none = RenderDeadline(raw: thumbd_deadline(not_after_ns: 0))

    private init(raw: thumbd_deadline) { self.raw = raw }

    /// `duration` from now on the monotonic clock; zero or less has already
    /// passed. The one place a job's time becomes C time: the service counts
    /// its deadlines on its own clock and hands the codecs what remains.
    public init(after duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        raw = thumbd_deadline_in(overflow ? (seconds < 0 ? .min : .max) : whole &+ attoseconds / 1_000_000_000)
    }

    public var hasPassed: Bool { thumbd_deadline_passed(raw) != 0 }
}
