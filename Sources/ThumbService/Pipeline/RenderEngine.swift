import ThumbCodec
import ThumbImaging

/// What one job on an original's bytes may spend: the seconds left of
/// `limits.maxRenderSeconds`, and the memory the render queue admitted it
/// with (a sandboxed worker is capped at that plus a fixed base).
public struct JobBudget: Sendable {
    /// Seconds from when the job starts; 0 or less has already passed.
    public var seconds: Double
    /// Bytes of `limits.maxDecodeMemoryBytes` the job holds.
    public var admittedBytes: Int

    public init(seconds: Double, admittedBytes: Int) {
        self.seconds = seconds
        self.admittedBytes = admittedBytes
    }

    /// The deadline the codecs check, counted from now.
    public var deadline: RenderDeadline { RenderDeadline(seconds: seconds) }
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

    public init(format: OutputFormat, quality: Int, background: RGBAColor?, animation: PipelineLimits? = nil) {
        self.format = format
        self.quality = quality
        self.background = background
        self.animation = animation
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

    public init(bitmap: Bitmap, facts: OriginalFacts?, encoded: EncodedThumbnail, fromAnimation: Bool = false) {
        self.bitmap = bitmap
        self.facts = facts
        self.encoded = encoded
        self.fromAnimation = fromAnimation
    }
}

/// Where the work on an original's bytes runs (SPEC §16, Isolation.md): the
/// daemon's engine runs each call in a sandboxed worker process, so a
/// decoder that hangs, crashes or allocates without bound costs one worker,
/// never the daemon; `thumbd thumbnail` and the pipeline's own tests run the
/// same calls in-process (`InProcessEngine`).
///
/// Each call is one job: it blocks the calling render-queue thread until
/// the answer, and ends with `.renderTimedOut` past `budget.seconds`.
public protocol RenderEngine: Sendable {
    /// The header and the layout of `variant` (ThumbnailPipeline.plan).
    func plan(_ original: OriginalFile, variant: PreparedVariant, limits: PipelineLimits,
              budget: JobBudget) throws(ServiceError) -> RenderPlan

    /// Plan, and then — when the plan's decode fits `budget.admittedBytes` —
    /// decode, scale, compose and encode it in the same job, on the bytes read
    /// once: a render whose original's facts are known (or not wanted) is one
    /// job. `focus` places an attention window.
    func planAndRender(_ original: OriginalFile, variant: PreparedVariant, limits: PipelineLimits,
                       focus: FocalPoint?, encoding: EncodingSpec,
                       budget: JobBudget) throws(ServiceError) -> PlannedRender

    /// Decode, scale, compose and encode `plan`; with `factsSHA256`, the
    /// original's facts on the way (ThumbnailPipeline.prepareWithFacts).
    func render(_ original: OriginalFile, plan: RenderPlan, factsSHA256: String?, encoding: EncodingSpec,
                budget: JobBudget) throws(ServiceError) -> RenderOutput

    /// Encodes a prepared bitmap kept in memory (another format of a variant).
    func encode(_ bitmap: Bitmap, encoding: EncodingSpec, budget: JobBudget) throws(ServiceError) -> EncodedThumbnail

    /// The header alone (`/info`'s first job).
    func probe(_ original: OriginalFile, limits: PipelineLimits, budget: JobBudget) throws(ServiceError) -> ImageHeader

    /// The original's facts from a canonical decode of its own.
    func facts(_ original: OriginalFile, header: ImageHeader, sha256: String,
               budget: JobBudget) throws(ServiceError) -> OriginalFacts

    /// Workers killed at their deadline and workers that died (Statistics.md
    /// `render.killed`, `render.crashed`); zero for an engine without workers.
    var counts: EngineCounts { get }

    /// Resident memory each worker process holds beside its job's admitted
    /// bytes — its own heap and the freed heap it keeps for the next job —
    /// which the render queue sets aside from `limits.maxDecodeMemoryBytes`
    /// once per worker (Isolation.md § Memory). Zero without worker processes.
    var workerBaseBytes: Int { get }
}

extension RenderEngine {
    public var workerBaseBytes: Int { 0 }
}

/// What `planAndRender` did.
public enum PlannedRender: Sendable {
    case rendered(RenderOutput)
    /// The decode needs more memory than the job was admitted with: the
    /// plan (its window placed), for a second job admitted at its estimate.
    case needsMore(RenderPlan)
}

/// Figures of an engine for `/stats` (`render.killed`, `render.crashed`) and
/// for the tests (`spawned`: worker processes started).
public struct EngineCounts: Sendable, Equatable {
    public var killed = 0
    public var crashed = 0
    public var spawned = 0

    public init(killed: Int = 0, crashed: Int = 0, spawned: Int = 0) {
        self.killed = killed
        self.crashed = crashed
        self.spawned = spawned
    }
}

/// The engine that runs every call on the calling thread: the CLI's (a
/// person's own file) and the service tests' that look at the pipeline
/// itself. The worker process runs its jobs through it too.
public struct InProcessEngine: RenderEngine {
    /// Runs before each decode or encode with the bytes its job was admitted
    /// with: a render worker gives back there the freed heap it kept beyond
    /// them (`FreedHeap`, Isolation.md § Memory). Header-only work skips it.
    private let beforeDecode: @Sendable (_ admittedBytes: Int) -> Void

    public init(beforeDecode: @escaping @Sendable (_ admittedBytes: Int) -> Void = { _ in }) {
        self.beforeDecode = beforeDecode
    }

    public var counts: EngineCounts { EngineCounts() }

    public func plan(_ original: OriginalFile, variant: PreparedVariant, limits: PipelineLimits,
                     budget: JobBudget) throws(ServiceError) -> RenderPlan {
        try ThumbnailPipeline.plan(source: try original.read(), variant: variant, limits: limits)
    }

    public func planAndRender(_ original: OriginalFile, variant: PreparedVariant, limits: PipelineLimits,
                              focus: FocalPoint?, encoding: EncodingSpec,
                              budget: JobBudget) throws(ServiceError) -> PlannedRender {
        let deadline = budget.deadline
        let source = try original.read()
        var plan = try ThumbnailPipeline.plan(source: source, variant: variant, limits: limits)
        if let focus { plan = plan.placed(onFocus: focus) }
        // An animation goes back to the daemon, which refuses maxAnimationPixels without
        // remembering it and admits the frames' estimate in a job of their own.
        if encoding.animation != nil && plan.isAnimated { return .needsMore(plan) }
        guard plan.estimatedMemory <= budget.admittedBytes else { return .needsMore(plan) }
        if deadline.hasPassed { throw .renderTimedOut }
        beforeDecode(budget.admittedBytes)
        return .rendered(try Self.render(source: source, plan: plan, factsSHA256: nil, encoding: encoding,
                                         deadline: deadline))
    }

    public func render(_ original: OriginalFile, plan: RenderPlan, factsSHA256: String?, encoding: EncodingSpec,
                       budget: JobBudget) throws(ServiceError) -> RenderOutput {
        beforeDecode(budget.admittedBytes)
        return try Self.render(source: try original.read(), plan: plan, factsSHA256: factsSHA256, encoding: encoding,
                               deadline: budget.deadline)
    }

    public func encode(_ bitmap: Bitmap, encoding: EncodingSpec,
                       budget: JobBudget) throws(ServiceError) -> EncodedThumbnail {
        beforeDecode(budget.admittedBytes)
        return try ThumbnailPipeline.encode(bitmap, format: encoding.format, quality: encoding.quality,
                                     background: encoding.background, deadline: budget.deadline)
    }

    public func probe(_ original: OriginalFile, limits: PipelineLimits,
                      budget: JobBudget) throws(ServiceError) -> ImageHeader {
        try ThumbnailPipeline.probe(source: try original.read(), limits: limits)
    }

    public func facts(_ original: OriginalFile, header: ImageHeader, sha256: String,
                      budget: JobBudget) throws(ServiceError) -> OriginalFacts {
        beforeDecode(budget.admittedBytes)
        return try ThumbnailPipeline.facts(source: try original.read(), header: header, sha256: sha256,
                                           deadline: budget.deadline)
    }

    /// A render job's work on bytes already read, whichever process runs it.
    public static func render(source: [UInt8], plan: RenderPlan, factsSHA256: String?, encoding: EncodingSpec,
                              deadline: RenderDeadline) throws(ServiceError) -> RenderOutput {
        if let limits = encoding.animation, plan.isAnimated {
            // Facts come from their own canonical decode: the frames' scaler is the request's.
            let facts = try factsSHA256.map { sha throws(ServiceError) in
                try ThumbnailPipeline.facts(source: source, header: plan.header, sha256: sha, deadline: deadline)
            }
            let placed = facts.map { plan.placed(onFocus: $0.focus) } ?? plan
            let animated = try ThumbnailPipeline.renderAnimation(source: source, plan: placed, quality: encoding.quality,
                                                                 limits: limits, deadline: deadline)
            let e = animated.encoded
            return RenderOutput(bitmap: animated.firstFrame, facts: facts,
                                encoded: EncodedThumbnail(bytes: e.bytes, format: e.format, width: e.width,
                                                          height: e.height, frames: animated.frames),
                                fromAnimation: true)
        }
        let bitmap: Bitmap
        var facts: OriginalFacts?
        if let sha = factsSHA256 {
            (bitmap, facts) = try ThumbnailPipeline.prepareWithFacts(source: source, plan: plan, sha256: sha,
                                                                     deadline: deadline)
        } else {
            bitmap = try ThumbnailPipeline.prepare(source: source, plan: plan, deadline: deadline)
        }
        let encoded = try ThumbnailPipeline.encode(bitmap, format: encoding.format, quality: encoding.quality,
                                                   background: encoding.background, deadline: deadline)
        return RenderOutput(bitmap: bitmap, facts: facts, encoded: encoded, fromAnimation: plan.isAnimated)
    }
}
