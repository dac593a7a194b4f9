import ThumbClock
import ThumbCodec
import ThumbImaging

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
                     budget: JobBudget) throws(RenderError) -> RenderPlan {
        try ThumbnailPipeline.plan(source: try original.read(), variant: variant, limits: limits)
    }

    public func planAndRender(_ original: OriginalFile, variant: PreparedVariant, limits: PipelineLimits,
                              focus: FocalPoint?, encoding: EncodingSpec,
                              budget: JobBudget) throws(RenderError) -> PlannedRender {
        let deadline = budget.codecDeadline
        let source = try original.read()
        var plan = try ThumbnailPipeline.plan(source: source, variant: variant, limits: limits)
        if let focus { plan = plan.placed(onFocus: focus) }
        // An animation goes back to the daemon, which refuses maxAnimationPixels without
        // remembering it and admits the frames' estimate in a job of their own.
        if encoding.animation != nil && plan.isAnimated { return .needsMore(plan) }
        guard plan.estimatedMemory(searching: encoding.autoQualityTarget != nil) <= budget.admittedBytes else {
            return .needsMore(plan)
        }
        if deadline.hasPassed { throw .renderTimedOut }
        beforeDecode(budget.admittedBytes)
        return .rendered(try Self.render(source: source, plan: plan, factsSHA256: nil, encoding: encoding,
                                         deadline: deadline, tileThreads: budget.tileThreads))
    }

    public func render(_ original: OriginalFile, plan: RenderPlan, factsSHA256: String?, encoding: EncodingSpec,
                       budget: JobBudget) throws(RenderError) -> RenderOutput {
        beforeDecode(budget.admittedBytes)
        return try Self.render(source: try original.read(), plan: plan, factsSHA256: factsSHA256, encoding: encoding,
                               deadline: budget.codecDeadline, tileThreads: budget.tileThreads)
    }

    public func encode(_ bitmap: Bitmap, encoding: EncodingSpec,
                       budget: JobBudget) throws(RenderError) -> EncodedThumbnail {
        beforeDecode(budget.admittedBytes)
        return try ThumbnailPipeline.encode(bitmap, format: encoding.format, quality: encoding.quality,
                                     background: encoding.background, deadline: budget.codecDeadline)
    }

    public func probe(_ original: OriginalFile, limits: PipelineLimits,
                      budget: JobBudget) throws(RenderError) -> ImageHeader {
        try ThumbnailPipeline.probe(source: try original.read(), limits: limits)
    }

    public func facts(_ original: OriginalFile, header: ImageHeader, sha256: String,
                      budget: JobBudget) throws(RenderError) -> OriginalFacts {
        beforeDecode(budget.admittedBytes)
        return try ThumbnailPipeline.facts(source: try original.read(), header: header, sha256: sha256,
                                           deadline: budget.codecDeadline)
    }

    /// A render job's work on bytes already read, whichever process runs it.
    public static func render(source: [UInt8], plan: RenderPlan, factsSHA256: String?, encoding: EncodingSpec,
                              deadline: RenderDeadline, tileThreads: Int = 1) throws(RenderError) -> RenderOutput {
        var encoding = encoding
        if let limits = encoding.animation, plan.isAnimated {
            let choice = try searchQuality(source: source, plan: plan, format: .webp, encoding: &encoding,
                                           deadline: deadline)
            // Facts come from their own canonical decode: the frames' scaler is the request's.
            let facts = try factsSHA256.map { sha throws(RenderError) in
                try ThumbnailPipeline.facts(source: source, header: plan.header, sha256: sha, deadline: deadline)
            }
            let placed = facts.map { plan.placed(onFocus: $0.focus) } ?? plan
            let animated = try ThumbnailPipeline.renderAnimation(source: source, plan: placed, quality: encoding.quality,
                                                                 limits: limits, deadline: deadline)
            let e = animated.encoded
            return RenderOutput(bitmap: animated.firstFrame, facts: facts,
                                encoded: EncodedThumbnail(bytes: e.bytes, format: e.format, width: e.width,
                                                          height: e.height, frames: animated.frames),
                                fromAnimation: true, autoQuality: choice)
        }
        let bitmap: Bitmap
        var facts: OriginalFacts?
        if let sha = factsSHA256 {
            (bitmap, facts) = try ThumbnailPipeline.prepareWithFacts(source: source, plan: plan, sha256: sha,
                                                                     deadline: deadline, tileThreads: tileThreads)
        } else {
            bitmap = try ThumbnailPipeline.prepare(source: source, plan: plan, deadline: deadline, tileThreads: tileThreads)
        }
        let choice = try searchQuality(source: source, plan: plan, format: encoding.format.resolved(isOpaque: bitmap.isOpaque),
                                       encoding: &encoding, deadline: deadline)
        let encoded = try ThumbnailPipeline.encode(bitmap, format: encoding.format, quality: encoding.quality,
                                                   background: encoding.background, deadline: deadline)
        return RenderOutput(bitmap: bitmap, facts: facts, encoded: encoded, fromAnimation: plan.isAnimated,
                            autoQuality: choice)
    }

    /// `q=auto`'s search for `format` when `encoding` asks for one and the
    /// answer is lossy: on the source's canonical rendition, within the
    /// render's deadline; `encoding.quality` becomes the `q` found.
    static func searchQuality(source: [UInt8], plan: RenderPlan, format: OutputFormat, encoding: inout EncodingSpec,
                              deadline: RenderDeadline) throws(RenderError) -> AutoQuality.Choice? {
        guard let target = encoding.autoQualityTarget, format.usesQuality else { return nil }
        let rendition = try AutoQuality.canonicalRendition(source: source, header: plan.header, deadline: deadline)
        let found = try AutoQuality.search(rendition, format: format, target: target, background: encoding.background,
                                           deadline: deadline)
        encoding.quality = found.q
        encoding.autoQualityTarget = nil
        return AutoQuality.Choice(format: format, target: target, q: found.q)
    }
}
