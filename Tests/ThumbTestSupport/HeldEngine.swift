import Synchronization
import ThumbCodec
import ThumbImaging
import ThumbRender

/// A `RenderEngine` that runs `before` on the render thread at the start of
/// each job that opens a render or an `/info` item (`plan`, `planAndRender`,
/// `probe`), then hands the job to `inner`: how a test holds a worker or makes
/// a probe slow without a slow file, and without a hook in the product.
public final class HeldEngine: RenderEngine {
    public let inner: any RenderEngine
    /// Runs before each opening job; nil runs nothing.
    public let before = Mutex<(@Sendable () -> Void)?>(nil)

    public init(_ inner: any RenderEngine) {
        self.inner = inner
    }

    private func opening() {
        before.withLock { $0 }?()
    }

    public func plan(_ original: OriginalFile, variant: PreparedVariant, limits: PipelineLimits,
                     budget: JobBudget) throws(RenderError) -> RenderPlan {
        opening()
        return try inner.plan(original, variant: variant, limits: limits, budget: budget)
    }

    public func planAndRender(_ original: OriginalFile, variant: PreparedVariant, limits: PipelineLimits,
                              focus: FocalPoint?, encoding: EncodingSpec,
                              budget: JobBudget) throws(RenderError) -> PlannedRender {
        opening()
        return try inner.planAndRender(original, variant: variant, limits: limits, focus: focus, encoding: encoding,
                                       budget: budget)
    }

    public func render(_ original: OriginalFile, plan: RenderPlan, factsSHA256: String?, encoding: EncodingSpec,
                       budget: JobBudget) throws(RenderError) -> RenderOutput {
        try inner.render(original, plan: plan, factsSHA256: factsSHA256, encoding: encoding, budget: budget)
    }

    public func encode(_ bitmap: Bitmap, encoding: EncodingSpec, budget: JobBudget) throws(RenderError) -> EncodedThumbnail {
        try inner.encode(bitmap, encoding: encoding, budget: budget)
    }

    public func probe(_ original: OriginalFile, limits: PipelineLimits, budget: JobBudget) throws(RenderError) -> ImageHeader {
        opening()
        return try inner.probe(original, limits: limits, budget: budget)
    }

    public func facts(_ original: OriginalFile, header: ImageHeader, sha256: String,
                      budget: JobBudget) throws(RenderError) -> OriginalFacts {
        try inner.facts(original, header: header, sha256: sha256, budget: budget)
    }

    public var counts: EngineCounts { inner.counts }
}
