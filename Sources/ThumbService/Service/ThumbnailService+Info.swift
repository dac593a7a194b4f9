import ThumbClock
import ThumbCodec
import ThumbFetch
import ThumbRender

/// `/info` (API.md § /info): an original's facts as JSON, from memory, from
/// beside the original on disk, or computed once from its canonical decode
/// on a render worker at the live priority. The download is the one
/// `/thumbnail` shares (`withOriginal`).
extension ThumbnailService {
    /// Counts an `/info` request (`info.requests`) and a batch's items (`info.batchItems`).
    public func countInfoRequest(batchItems: Int? = nil) {
        counters.countInfoRequest()
        if let batchItems { counters.withLock { $0.infoBatchItems += batchItems } }
    }

    /// Counts a `POST /info` answered as a stream of lines (`info.streamed`).
    public func countInfoStreamed() {
        counters.withLock { $0.infoStreamed += 1 }
    }

    /// What memory already says of a source: its facts, or a failure
    /// remembered (the negative cache, a host no longer allowed); nil when
    /// only `info(_:completion:)` can tell. A streamed batch writes these
    /// lines first (API.md § POST /info, Streaming).
    public func rememberedInfo(_ request: InfoRequest) -> Result<SourceInfo, ServiceError>? {
        if let refused = hostRefusal(host: request.sourceHost) { return .failure(refused) }
        if case .info(let answer)? = memory.get(.info(url: request.sourceURL)) { return .success(answer) }
        if let failure = negative.lookup(request.sourceURL) { return .failure(failure) }
        return nil
    }

    /// The hot path: the answer when it is in memory and the source's host
    /// still allowed; nil otherwise (then `info(_:completion:)` answers).
    public func cachedInfo(_ request: InfoRequest) -> SourceInfo? {
        guard hostRefusal(host: request.sourceHost) == nil,
              case .info(let answer)? = memory.get(.info(url: request.sourceURL)) else { return nil }
        return answer
    }

    /// Answers one validated request; `completion` runs exactly once, on any
    /// thread — unless `deserted` (a `POST /info` item: its batch has
    /// answered, or its client left) turns true and nobody else waits for the
    /// source: then its download and facts jobs stop where they are
    /// (API.md § /info), and `completion` is never called, since nobody reads it.
    public func info(_ request: InfoRequest, deserted: (@Sendable () -> Bool)? = nil,
                     completion: @escaping @Sendable (Result<InfoResult, ServiceError>) -> Void) {
        let url = request.sourceURL
        if let refused = hostRefusal(host: request.sourceHost) { return completion(.failure(refused)) }
        if case .info(let answer)? = memory.get(.info(url: url)) {
            return completion(.success(InfoResult(info: answer, cache: .memory)))
        }
        // Dropped uncalled when abandoned: `abandonInfo` already knows which flight ended.
        let desertion = deserted.map { Coalescer<String, InfoResult>.Desertion(isDeserted: $0, abandoned: {}) }
        guard infoFlights.join(url, desertion: desertion, completion) else { return }
        lookUpInfo(request.source, watched: deserted != nil)
    }

    /// The work of the info flight of `url`, which the caller has opened:
    /// the original (shared with `/thumbnail`), then its facts, known or
    /// computed. `watched`: its first waiter may be deserted, so the work
    /// under it looks (a flight a GET started never is: its waiter keeps it alive).
    private func lookUpInfo(_ source: OriginalSource, watched: Bool) {
        let url = source.url
        let finish: @Sendable (Result<InfoResult, ServiceError>) -> Void = { [infoFlights] result in
            infoFlights.complete(url, with: result)
        }
        // Again for a flight started over (`abandonInfo`): its facts may have been kept meanwhile.
        if case .info(let answer)? = memory.get(.info(url: url)) {
            return finish(.success(InfoResult(info: answer, cache: .memory)))
        }
        if let failure = negative.lookup(url) { return finish(.failure(failure)) }
        withOriginal(source, live: true, desertion: watched ? infoDesertion(source) : nil) { [self] result in
            switch result {
            case .failure(let error):
                finish(.failure(error))
            case .success(let original):
                // Deserted while it downloaded: no facts job takes a queue slot for nobody.
                if watched, abandonInfo(url) { return }
                // On the fetch queue: the facts file is a small read.
                if let facts = knownFacts(url: url, original) {
                    finish(.success(InfoResult(info: keep(facts, url: url, original), cache: original.outcome)))
                } else {
                    computeFacts(source, original, watched: watched, finish)
                }
            }
        }
    }

    /// How the info flight of `url` waits for the work under it (the
    /// download, the facts): deserted while every waiter of the info flight
    /// is; when that work stops for it, the info flight ends too — or starts
    /// over, when a request joined it since.
    private func infoDesertion<Value>(_ source: OriginalSource) -> Coalescer<String, Value>.Desertion {
        let url = source.url
        return .init(isDeserted: { [infoFlights] in infoFlights.isDeserted(url) },
                     abandoned: { [self] in if !abandonInfo(url) { lookUpInfo(source, watched: true) } })
    }

    /// Ends the info flight of `url` without an answer when every waiter of
    /// it is deserted (API.md § /info: a batch that has answered), and says so.
    private func abandonInfo(_ url: String) -> Bool {
        guard infoFlights.abandonIfDeserted(url) else { return false }
        counters.withLock { $0.infoAbandoned += 1 }
        return true
    }

    /// The answer of `facts`, kept in memory for the next request.
    private func keep(_ facts: OriginalFacts, url: String, _ original: Original) -> SourceInfo {
        let info = SourceInfo(url: url, bytes: original.metadata.length, facts: facts)
        memory.insert(.info(info), for: .info(url: url))
        return info
    }

    /// Computes the facts on a render worker, admitted like a render: first
    /// at the probe's cost, then — when the canonical decode needs more —
    /// again at its estimate, ahead of new work. The deadline is
    /// `limits.maxRenderSeconds` from when the first job starts. A
    /// computation already under way (`factsFlights`) is joined instead, and
    /// promoted to the live queue when it was a first render's background job.
    private func computeFacts(_ source: OriginalSource, _ original: Original, watched: Bool,
                              _ finish: @escaping @Sendable (Result<InfoResult, ServiceError>) -> Void) {
        let url = source.url
        let outcome = original.outcome
        let first = factsFlights.join(url, desertion: watched ? infoDesertion(source) : nil) { [self] result in
            finish(result.map { InfoResult(info: keep($0, url: url, original), cache: outcome) })
        }
        guard first else {
            // A first render's job, live from now on (out of the table: its second job, if it
            // needs one, goes live too); that render means the source is on a screen (issue 38).
            backgroundFacts.withLock { table in
                guard let id = table.removeValue(forKey: url) else { return }
                renders.promote(id)
                renders.hurry(id)
            }
            return
        }
        startFacts(url: url, original, priority: .live)
    }

    /// The facts a first render left for later (its decode was not at the
    /// canonical scale, and a second decode would have delayed its answer):
    /// computed at prefetch priority, behind live work, unless an `/info`
    /// asks for them first. Their failure is not remembered: it would refuse
    /// renders of an image they serve well.
    func computeFactsInBackground(url: String, _ original: Original) {
        guard factsFlights.join(url, { _ in }) else { return }
        startFacts(url: url, original, priority: .prefetch)
    }

    /// The jobs of a computation whose flight the caller has opened; every path closes it.
    private func startFacts(url: String, _ original: Original, priority: RenderQueue.Priority) {
        let background = priority == .prefetch
        let done: @Sendable (Result<OriginalFacts, ServiceError>) -> Void = { [self] result in
            switch result {
            case .success(let facts): remember(facts, url: url)
            case .failure(let error): if !background { negative.remember(url, error) }
            }
            // The flight first: a job id recorded after this sees it closed (see below).
            factsFlights.complete(url, with: result)
            if background { backgroundFacts.withLock { $0[url] = nil } }
            queuedFacts.withLock { $0[url] = nil }
        }
        // Neither refusal of the queue is remembered: overload is momentary, and a cost over
        // the budget depends on the configuration (as for renders).
        let refused: @Sendable (ServiceError) -> Void = { [self] error in
            factsFlights.complete(url, with: .failure(error))
            if background { backgroundFacts.withLock { $0[url] = nil } }
        }
        let current = config
        let limits = current.pipelineLimits
        let seconds = Duration.seconds(current.limits.maxRenderSeconds)
        let budget = current.limits.maxDecodeMemoryBytes
        if let error = Self.overBudget(original, budget: budget) { return done(.failure(error)) }
        let sha = original.metadata.sha256
        let admitted = RenderPlan.probeCost(sourceBytes: original.file.length, budget: budget)
        let id = submitInfoJob(cost: admitted, priority: priority, ahead: false, refused) { [self] in
            queuedFacts.withLock { $0[url] = nil }   // started: no render can withdraw it now
            // Everyone waiting is a batch that has answered: nothing to compute (a background
            // job's own waiter is never deserted). The flight's waiters end or start over.
            if factsFlights.abandonIfDeserted(url) { return }
            // Another route may have kept them since this one looked: hand those out, compute nothing.
            if let known = knownFacts(url: url, original) {
                factsFlights.complete(url, with: .success(known))
                if background { backgroundFacts.withLock { $0[url] = nil } }
                return
            }
            let deadline = Deadline(after: seconds, on: clock)
            do throws(ServiceError) {
                let header = try rendering { () throws(RenderError) in
                    try engine.probe(original.file, limits: limits,
                                     budget: JobBudget(deadline: deadline, admittedBytes: admitted))
                }
                if deadline.hasPassed { throw .renderTimedOut }
                let estimate = ThumbnailPipeline.canonicalDecodeMemory(header, sourceBytes: original.file.length)
                if estimate <= admitted {
                    return done(.success(try rendering { () throws(RenderError) in
                        try engine.facts(original.file, header: header, sha256: sha,
                                         budget: JobBudget(deadline: deadline, admittedBytes: admitted))
                    }))
                }
                // The second wait is not the job's: the time left goes on when it starts. A
                // background computation an `/info` joined meanwhile (promoted) is live now.
                let left = deadline.remaining
                let promoted = background && backgroundFacts.withLock { $0[url] == nil }
                submitInfoJob(cost: estimate, priority: promoted ? .live : priority, ahead: true, refused) { [self] in
                    if factsFlights.abandonIfDeserted(url) { return }
                    done(Result { () throws(ServiceError) in
                        try rendering { () throws(RenderError) in
                            try engine.facts(original.file, header: header, sha256: sha,
                                             budget: JobBudget(deadline: Deadline(after: left, on: clock),
                                                               admittedBytes: estimate))
                        }
                    })
                }
            } catch {
                done(.failure(error))
            }
        }
        // Recorded once submitted, under the table's lock and only while the flight is open:
        // a job that already finished closed its flight before clearing the table.
        if background, let id {
            backgroundFacts.withLock { table in
                if factsFlights.isInFlight(url) { table[url] = id }
            }
        }
        if let id {
            // A render of the source that started before this job existed left its mark: moved
            // forward (under the table's lock: once the job shows there, it has moved).
            queuedFacts.withLock { table in
                guard factsFlights.isInFlight(url) else { return }
                table[url] = id
                if onScreen.withLock({ $0.remove(url.hashValue) != nil }) { renders.hurry(id) }
            }
        }
    }

    /// Takes the facts job of `url` out of the queue if it still waits
    /// there, and says whether it did: the caller, a render that computes
    /// the facts anyway, then completes their flight (one job serves both,
    /// API.md § POST /info).
    func withdrawQueuedFacts(_ url: String) -> Bool {
        guard let id = queuedFacts.withLock({ $0[url] }), renders.withdraw(id) else { return false }
        queuedFacts.withLock { if $0[url] == id { $0[url] = nil } }
        backgroundFacts.withLock { if $0[url] == id { $0[url] = nil } }
        return true
    }

    /// One job on the render queue; a full queue (or a cost over the whole
    /// budget) fails the computation at once. The job's id, for promotion.
    @discardableResult
    private func submitInfoJob(cost: Int, priority: RenderQueue.Priority, ahead: Bool,
                               _ refused: @escaping @Sendable (ServiceError) -> Void,
                               _ work: @escaping @Sendable () -> Void) -> Int? {
        do throws(ServiceError) {
            return try renders.submit(cost: cost, priority: priority, kind: .facts, ahead: ahead, work)
        } catch {
            if case .overloaded = error, priority == .live { counters.withLock { $0.renderRejected += 1 } }
            refused(error)
            return nil
        }
    }
}
