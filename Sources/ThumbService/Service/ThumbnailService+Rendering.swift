import ThumbClock
import ThumbCodec
import ThumbImaging
import ThumbRender

/// What a render job did: finished, or learned from the header that its
/// decode needs more memory than the job was admitted with, and must wait
/// for it (`then` runs in a second job, admitted at `cost`, told how many of
/// the `tileThreads` its decode could use it was lent: `RenderQueue`).
enum RenderStep: Sendable {
    case done(Rendition, CacheOutcome)
    case needsMore(cost: Int, tileThreads: Int, then: @Sendable (_ tileThreads: Int) throws(ServiceError) -> RenderStep)
}

/// The render side of the service: everything that touches an original's
/// bytes runs on a render worker, under admission and the render deadline
/// (SourcesAndLimits.md § Renders).
extension ThumbnailService {
    /// Renders `original` for `request` in a first job admitted at
    /// `RenderPlan.probeCost` (the original's size and a probe allowance): it
    /// reads the bytes, probes the header — a C library's parse, which can
    /// cost seconds on a hostile file — and plans. A decode whose estimate
    /// fits that admission goes on in the same job; a larger one goes back to
    /// the head of the queue with its estimate (and reads the bytes again
    /// there: they are not held while it waits). The render deadline counts
    /// from when the first job starts and covers probe, decode and encode,
    /// but not the second wait.
    func render(_ request: ThumbnailRequest, from original: Original) {
        let current = config
        let limits = current.pipelineLimits
        let seconds = Duration.seconds(current.limits.maxRenderSeconds)
        let budget = current.limits.maxDecodeMemoryBytes
        if let error = Self.overBudget(original, budget: budget) { return finishRender(request, .failure(error)) }
        let admitted = RenderPlan.probeCost(sourceBytes: original.file.length, budget: budget)
        let target = current.output.autoQualityTarget
        let encoding = Self.encoding(request, limits: limits, autoQualityTarget: target)
        // A source someone wants the thumbnail of is on a screen: its facts, if a job waits for
        // them, go first in their line, ahead of rows only prefetched (issue 38); a job not
        // submitted yet finds the mark (`startFacts`). Under the table's lock, so that one of
        // the two sees the other.
        let waiting = queuedFacts.withLock { table -> Int? in
            if let id = table[request.sourceURL] { return id }
            onScreen.withLock { marks in
                if marks.count >= Self.onScreenMarks { marks.removeAll() }
                marks.insert(request.sourceURL.hashValue)
            }
            return nil
        }
        if let waiting { renders.hurry(waiting) }
        submitRender(request, cost: admitted) { [self] _ throws(ServiceError) in
            let deadline = Deadline(after: seconds, on: clock)
            // The common miss — the original's facts known, or nothing could keep them — is one
            // job: plan and render on one read of the bytes (a second job only when the decode
            // needs more memory than the probe was admitted with). A request whose answer
            // depends on whether the source is animated plans first unless its facts say.
            let known = knownFacts(url: request.sourceURL, original)
            var request = request, encoding = encoding
            if request.asksAutoQuality {
                // Searched by another instance, or before a restart: kept with the facts.
                request = request.resolvingAutoQuality(knownAutoQuality(url: request.sourceURL, original),
                                                       target: target)
                encoding = Self.encoding(request, limits: limits, autoQualityTarget: target)
            }
            if let known, request.animationVariant != nil {
                request = request.answering(sourceIsAnimated: known.rendersAsAnimation)
                encoding = Self.encoding(request, limits: limits, autoQualityTarget: target)
            }
            if known != nil || (!request.variant.prepared.needsFocus && !canKeepFacts(url: request.sourceURL)
                                    && request.animationVariant == nil) {
                let planned: PlannedRender
                do throws(ServiceError) {
                    planned = try rendering { () throws(RenderError) in
                        try engine.planAndRender(original.file, variant: request.variant.prepared, limits: limits,
                                                 focus: known?.focus, encoding: encoding,
                                                 budget: JobBudget(deadline: deadline, admittedBytes: admitted))
                    }
                } catch {
                    negative.remember(request.sourceURL, error)
                    throw error
                }
                switch planned {
                case .rendered(let output):
                    return finish(request, original, output, facts: .none)
                case .needsMore(let plan):
                    let left = deadline.remaining
                    let estimate = try Self.estimate(plan, encoding, withFacts: false)
                    return .needsMore(cost: estimate, tileThreads: plan.tileThreads) {
                        [self, request, encoding] (threads) throws(ServiceError) in
                        try decode(request, original, plan: plan, facts: .none, encoding: encoding,
                                   budget: JobBudget(deadline: Deadline(after: left, on: clock), admittedBytes: estimate,
                                                     tileThreads: threads))
                    }
                }
            }
            var plan: RenderPlan
            do throws(ServiceError) {
                plan = try rendering { () throws(RenderError) in
                    try engine.plan(original.file, variant: request.variant.prepared, limits: limits,
                                    budget: JobBudget(deadline: deadline, admittedBytes: admitted))
                }
            } catch {
                negative.remember(request.sourceURL, error)
                throw error
            }
            if deadline.hasPassed { throw .renderTimedOut }
            if request.animationVariant != nil {
                request = request.answering(sourceIsAnimated: plan.isAnimated)
                encoding = Self.encoding(request, limits: limits, autoQualityTarget: target)
            }
            var facts = factsWork(request, original, &plan, budget: budget)
            // An animation's frames share no decode with the canonical copy: its facts come after
            // it, unless its window needs their focus first.
            if facts == .inline && encoding.animation != nil && plan.isAnimated && !plan.geometry.needsFocus {
                facts = .later
            }
            let estimate = try Self.estimate(plan, encoding, withFacts: facts == .inline)
            if estimate <= admitted {
                return try decode(request, original, plan: plan, facts: facts, encoding: encoding,
                                  budget: JobBudget(deadline: deadline, admittedBytes: admitted))
            }
            // The second wait is not the render's: the time left goes on when its job starts.
            let left = deadline.remaining
            return .needsMore(cost: estimate, tileThreads: plan.tileThreads) {
                [self, request, plan, facts, encoding] (threads) throws(ServiceError) in
                try decode(request, original, plan: plan, facts: facts, encoding: encoding,
                           budget: JobBudget(deadline: Deadline(after: left, on: clock), admittedBytes: estimate,
                                             tileThreads: threads))
            }
        }
    }

    /// How `request`'s rendition is encoded: animated (under `limits`) when
    /// it is WebP and `animated` is not 0 (API.md § Animation); with a
    /// `q=auto` search for `autoQualityTarget` while its `q` is unresolved.
    static func encoding(_ request: ThumbnailRequest, limits: PipelineLimits, autoQualityTarget: Int) -> EncodingSpec {
        var encoding = request.variant.encoding
        if request.variant.animates { encoding.animation = limits }
        if request.variant.asksAutoQuality { encoding.autoQualityTarget = autoQualityTarget }
        return encoding
    }

    /// The memory a render of `plan` is admitted with. An animation is first
    /// checked against `limits.maxAnimationPixels`: that refusal depends on
    /// the variant, so it is thrown past the negative cache, never remembered.
    static func estimate(_ plan: RenderPlan, _ encoding: EncodingSpec, withFacts: Bool) throws(ServiceError) -> Int {
        // A q=auto search runs after the render's bitmap exists, beside it.
        let search = encoding.autoQualityTarget == nil ? 0
            : AutoQuality.searchMemory(header: plan.header, sourceBytes: plan.sourceBytes)
        guard let limits = encoding.animation, plan.isAnimated else {
            return (withFacts ? plan.estimatedMemoryWithFacts : plan.estimatedMemory) + search
        }
        try rendering { () throws(RenderError) in try ThumbnailPipeline.checkAnimationPixels(plan: plan, limits: limits) }
        let frames = plan.estimatedAnimationMemory(limits: limits)
        return (withFacts ? max(frames, ThumbnailPipeline.canonicalDecodeMemory(plan.header, sourceBytes: plan.sourceBytes))
            : frames) + search
    }

    /// What a render does about its original's facts (API.md § /info: they
    /// come from its first render when not known yet).
    enum FactsWork: Sendable {
        /// Known (and an attention window placed on their focus), or left to `/info`.
        case none
        /// Computed by this render from its own decode, or a canonical decode
        /// first when its window needs the focus.
        case inline
        /// Computed after the answer at prefetch priority: a second decode
        /// would have delayed it (+25 % on a 1024-px first render of a 12 MP JPEG).
        case later
    }

    /// The facts' part in a render of `plan`; places an attention window on
    /// known facts. A render that fits the budget only without the canonical
    /// copy leaves them for later, and one whose facts nothing could keep
    /// computes none, unless its window needs the focus.
    private func factsWork(_ request: ThumbnailRequest, _ original: Original, _ plan: inout RenderPlan,
                           budget: Int) -> FactsWork {
        if let facts = knownFacts(url: request.sourceURL, original) {
            plan = plan.placed(onFocus: facts.focus)
            return .none
        }
        if plan.geometry.needsFocus { return .inline }
        guard canKeepFacts(url: request.sourceURL) else { return .none }
        return ThumbnailPipeline.sharesCanonicalDecode(plan) && plan.estimatedMemoryWithFacts <= budget ? .inline : .later
    }

    /// Decode, scale, compose and encode in one job of the engine, then keep
    /// the prepared bitmap and the rendition: the end of every render; the
    /// original's facts too when `facts` says so, kept for the renders after it.
    /// `encoding` is the one the render's first job estimated its memory
    /// with: a reload between the two jobs does not change what is rendered.
    private func decode(_ request: ThumbnailRequest, _ original: Original, plan: RenderPlan, facts: FactsWork,
                        encoding: EncodingSpec, budget: JobBudget) throws(ServiceError) -> RenderStep {
        let output: RenderOutput
        let url = request.sourceURL, sha = original.metadata.sha256
        do throws(ServiceError) {
            // Claimed here, on the render thread, and settled before it returns: no path leaves the
            // flight open. A flight whose facts job still waits in the queue is claimed too: that
            // job is withdrawn, and this render serves both.
            if facts == .inline, factsFlights.join(url, { _ in }) || withdrawQueuedFacts(url) {
                if let known = knownFacts(url: url, original) {
                    // Kept by another route since this render looked: used, not computed again.
                    factsFlights.complete(url, with: .success(known))
                    output = try rendering { () throws(RenderError) in
                        try engine.render(original.file, plan: plan.placed(onFocus: known.focus),
                                          factsSHA256: nil, encoding: encoding, budget: budget)
                    }
                } else {
                    do throws(ServiceError) {
                        output = try rendering { () throws(RenderError) in
                            try engine.render(original.file, plan: plan, factsSHA256: sha, encoding: encoding,
                                              budget: budget)
                        }
                        guard let computed = output.facts else { throw .internalError("the render returned no facts") }
                        remember(computed, url: url)
                        factsFlights.complete(url, with: .success(computed))
                    } catch {
                        factsFlights.complete(url, with: .failure(error))
                        throw error
                    }
                }
            } else {
                // With `/info` computing them this moment, an attention window cannot wait for its focus.
                let needsFocus = facts == .inline && plan.geometry.needsFocus
                output = try rendering { () throws(RenderError) in
                    try engine.render(original.file, plan: plan, factsSHA256: needsFocus ? sha : nil,
                                      encoding: encoding, budget: budget)
                }
            }
        } catch {
            negative.remember(request.sourceURL, error)
            throw error
        }
        return finish(request, original, output, facts: facts)
    }

    /// Keeps what a render made — the prepared bitmap, the rendition — and
    /// leaves the original's facts for later when `facts` says so.
    private func finish(_ request: ThumbnailRequest, _ original: Original, _ output: RenderOutput,
                        facts: FactsWork) -> RenderStep {
        let sha = original.metadata.sha256
        var request = request
        if let choice = output.autoQuality {
            // The rendition is keyed, tagged and answered by the q found: q=auto and q=Q share it.
            rememberAutoQuality(choice, url: request.sourceURL, original)
            request.variant.quality = choice.q
        }
        memory.insert(.prepared(output.bitmap, originalSHA256: sha, fromAnimation: output.fromAnimation),
                      for: .prepared(url: request.sourceURL, request.variant.prepared))
        if facts == .later { computeFactsInBackground(url: request.sourceURL, original) }
        return .done(keep(request, output.encoded, sha256: sha, fromAnimatedSource: output.fromAnimation), original.outcome)
    }

    /// Queues one job of a render; `ahead` for the second job of a render
    /// (`RenderStep.needsMore`), which goes before new work.
    func submitRender(_ request: ThumbnailRequest, cost: Int, tileThreads: Int = 1, ahead: Bool = false,
                      _ work: @escaping @Sendable (_ tileThreads: Int) throws(ServiceError) -> RenderStep) {
        let job: @Sendable (Int) -> Void = { [self] threads in
            // The check a storm needs: a job queued behind busy workers
            // outlives its clients (wrk -c32 of distinct 12 MP JPEGs queued
            // up to 32 renders nobody waited for), and each would cost a full
            // decode. Returning frees the worker and the job's memory admission.
            if abandonIfDeserted(request) { return }
            do throws(ServiceError) {
                switch try work(threads) {
                case .done(let rendition, let outcome):
                    finishRender(request, .success(ThumbnailResult(rendition: rendition, cache: outcome)))
                case .needsMore(let cost, let tileThreads, let then):
                    submitRender(request, cost: cost, tileThreads: tileThreads, ahead: true, then)
                }
            } catch {
                finishRender(request, .failure(error))
            }
        }
        // Clients that left during the download need no queue slot either.
        if abandonIfDeserted(request) { return }
        do throws(ServiceError) {
            // Records the job's id in the flight, so a live request joining a prefetch render promotes it.
            try renderFlights.submit(request) { priority throws(ServiceError) in
                try renders.submit(cost: cost, priority: priority, ahead: ahead, tileThreads: tileThreads, job)
            }
        } catch {
            finishRender(request, .failure(error))
        }
    }

    func finishRender(_ request: ThumbnailRequest, _ result: Result<ThumbnailResult, ServiceError>) {
        counters.withLock {
            switch result {
            case .success: $0.renderCompleted += 1
            case .failure(.overloaded): break   // never rendered; counted as render.rejected
            case .failure: $0.renderFailures += 1
            }
        }
        endFlight(request, result)
    }

    /// Ends the render flight, uncounted as completed or failed and with
    /// nothing cached or remembered, when every waiter's client has gone;
    /// true if it did. The download, if any, has finished: its original is
    /// in the disk store (when the store keeps it) for the next request.
    func abandonIfDeserted(_ request: ThumbnailRequest) -> Bool {
        guard renderFlights.abandonIfDeserted(request) else { return false }
        counters.withLock { $0.renderAbandoned += 1 }
        return true
    }

    /// Every way a render flight ends goes through here, except abandonment
    /// (`abandonIfDeserted`), which has no result to hand out.
    func endFlight(_ request: ThumbnailRequest, _ result: Result<ThumbnailResult, ServiceError>) {
        renderFlights.complete(request, with: result)
    }

    /// The refusal of an original whose bytes alone would not fit the decode
    /// budget, whatever its header says (renders and facts alike).
    static func overBudget(_ original: Original, budget: Int) -> ServiceError? {
        guard original.file.length > budget else { return nil }
        return .imageTooLarge("the original's \(original.file.length) bytes alone are over maxDecodeMemoryBytes \(budget)")
    }

    /// Encodes a prepared bitmap from the memory cache in one job of the engine.
    func encode(_ request: ThumbnailRequest, bitmap: Bitmap, sha256: String,
                fromAnimatedSource: Bool) throws(ServiceError) -> Rendition {
        let budget = JobBudget(deadline: Deadline(after: .seconds(config.limits.maxRenderSeconds), on: clock),
                               admittedBytes: bitmap.byteCount)
        let encoded = try rendering { () throws(RenderError) in try engine.encode(bitmap, encoding: request.variant.encoding, budget: budget) }
        return keep(request, encoded, sha256: sha256, fromAnimatedSource: fromAnimatedSource)
    }

    /// The rendition of an encoded result, kept in the memory cache.
    func keep(_ request: ThumbnailRequest, _ encoded: EncodedThumbnail, sha256: String,
              fromAnimatedSource: Bool) -> Rendition {
        var rendition = Rendition(bytes: encoded.bytes, contentType: encoded.format.contentType,
                                  width: encoded.width, height: encoded.height, frames: encoded.frames,
                                  etag: Rendition.etag(originalSHA256: sha256, variant: request.variant))
        rendition.fromAnimatedSource = fromAnimatedSource
        if encoded.format.usesQuality { rendition.quality = request.variant.quality }
        memory.insert(.rendition(rendition), for: .rendition(url: request.sourceURL, request.variant))
        return rendition
    }
}
