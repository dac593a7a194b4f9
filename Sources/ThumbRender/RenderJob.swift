import ThumbClock
import ThumbCodec
import ThumbImaging

/// What one job on an original's bytes may spend: the time left of
/// `limits.maxRenderSeconds`, and the memory the render queue admitted it
/// with (a sandboxed worker is capped at that plus a fixed base).
public struct JobBudget: Sendable {
    /// When the job must have ended, on the service's clock.
    public var deadline: Deadline
    /// Bytes of `limits.maxDecodeMemoryBytes` the job holds.
    public var admittedBytes: Int
    /// Threads a HEIC grid's tiles may decode on: the job's own and the idle
    /// workers lent to it when it started (`RenderPlan.tileThreads` at most).
    public var tileThreads: Int

    public init(deadline: Deadline, admittedBytes: Int, tileThreads: Int = 1) {
        self.deadline = deadline
        self.admittedBytes = admittedBytes
        self.tileThreads = tileThreads
    }

    /// The deadline the codecs check: the time left, from now, in C time.
    public var codecDeadline: RenderDeadline { RenderDeadline(after: deadline.remaining) }
}

/// How a rendition is encoded from a prepared bitmap.
public struct EncodingSpec: Sendable, Equatable, Codable {
    public var format: OutputFormat
    public var quality: Int
    /// JPEG's flattening colour (`ThumbnailVariant.flattenBackground`).
    public var background: RGBAColor?
    /// Set when an animated source gives an animated WebP (API.md §
    /// Animation): the limits its frames are rendered under. nil: the first frame.
    public var animation: PipelineLimits?
    /// Set for `q=auto` while the source's `q` for the format is unknown
    /// (`output.autoQualityTarget`): the render searches it first
    /// (`AutoQuality.search`) and encodes with it; `quality` is then ignored.
    public var autoQualityTarget: Int?

    public init(format: OutputFormat, quality: Int, background: RGBAColor?, animation: PipelineLimits? = nil,
                autoQualityTarget: Int? = nil) {
        self.format = format
        self.quality = quality
        self.background = background
        self.animation = animation
        self.autoQualityTarget = autoQualityTarget
    }
}

/// What a render job hands back: the prepared bitmap (kept in the memory
/// cache for other formats of the variant), the original's facts when they
/// were asked for, and the encoded rendition.
public struct RenderOutput: Sendable {
    public var bitmap: Bitmap
    public var facts: OriginalFacts?
    public var encoded: EncodedThumbnail
    /// The source has two frames or more (the bitmap is its first).
    public var fromAnimation: Bool
    /// What a `q=auto` search of this render chose (`EncodingSpec.autoQualityTarget`);
    /// nil when none ran (a lossless answer, or `q` given).
    public var autoQuality: AutoQuality.Choice?

    public init(bitmap: Bitmap, facts: OriginalFacts?, encoded: EncodedThumbnail, fromAnimation: Bool = false,
                autoQuality: AutoQuality.Choice? = nil) {
        self.bitmap = bitmap
        self.facts = facts
        self.encoded = encoded
        self.fromAnimation = fromAnimation
        self.autoQuality = autoQuality
    }
}
