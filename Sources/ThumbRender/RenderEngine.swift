import ThumbClock
import ThumbCodec
import ThumbImaging

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
              budget: JobBudget) throws(RenderError) -> RenderPlan

    /// Plan, and then — when the plan's decode fits `budget.admittedBytes` —
    /// decode, scale, compose and encode it in the same job, on the bytes read
    /// once: a render whose original's facts are known (or not wanted) is one
    /// job. `focus` places an attention window.
    func planAndRender(_ original: OriginalFile, variant: PreparedVariant, limits: PipelineLimits,
                       focus: FocalPoint?, encoding: EncodingSpec,
                       budget: JobBudget) throws(RenderError) -> PlannedRender

    /// Decode, scale, compose and encode `plan`; with `factsSHA256`, the
    /// original's facts on the way (ThumbnailPipeline.prepareWithFacts).
    func render(_ original: OriginalFile, plan: RenderPlan, factsSHA256: String?, encoding: EncodingSpec,
                budget: JobBudget) throws(RenderError) -> RenderOutput

    /// Encodes a prepared bitmap kept in memory (another format of a variant).
    func encode(_ bitmap: Bitmap, encoding: EncodingSpec, budget: JobBudget) throws(RenderError) -> EncodedThumbnail

    /// The header alone (`/info`'s first job).
    func probe(_ original: OriginalFile, limits: PipelineLimits, budget: JobBudget) throws(RenderError) -> ImageHeader

    /// The original's facts from a canonical decode of its own.
    func facts(_ original: OriginalFile, header: ImageHeader, sha256: String,
               budget: JobBudget) throws(RenderError) -> OriginalFacts

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
