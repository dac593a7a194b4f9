import ThumbCodec

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

    /// The hot path: the answer when it is in memory and the source's host
    /// still allowed; nil otherwise (then `info(_:completion:)` answers).
    public func cachedInfo(_ request: InfoRequest) -> InfoAnswer? {
        guard hostRefusal(host: request.sourceHost) == nil,
              case .info(let answer)? = memory.get(.info(url: request.sourceURL)) else { return nil }
        return answer
    }

    /// Answers one validated request; `completion` runs exactly once, on any thread.
    public func info(_ request: InfoRequest,
                     completion: @escaping @Sendable (Result<InfoResult, ServiceError>) -> Void) {
        let url = request.sourceURL
        if let refused = hostRefusal(host: request.sourceHost) { return completion(.failure(refused)) }
        if case .info(let answer)? = memory.get(.info(url: url)) {
            return completion(.success(InfoResult(answer: answer, cache: .memory)))
        }
        guard infoFlights.join(url, completion) else { return }
        let finish: @Sendable (Result<InfoResult, ServiceError>) -> Void = { [infoFlights] result in
            infoFlights.complete(url, with: result)
        }
        if let failure = negative.lookup(url) { return finish(.failure(failure)) }
        withOriginal(url, live: true) { [self] result in
            switch result {
            case .failure(let error):
                finish(.failure(error))
            case .success(let original):
                // On the fetch queue: the facts file is a small read.
                if let facts = knownFacts(url: url, original) {
                    finish(.success(InfoResult(answer: keep(facts, url: url, original), cache: original.outcome)))
                } else {
                    computeFacts(url: url, original, finish)
                }
            }
        }
    }

    /// The answer of `facts`, kept in memory for the next request.
    private func keep(_ facts: OriginalFacts, url: String, _ original: Original) -> InfoAnswer {
        let answer = InfoAnswer(url: url, bytes: original.metadata.length, facts: facts)
        memory.insert(.info(answer), for: .info(url: url))
        return answer
    }

    /// Computes the facts on a render worker, admitted like a render: first
    /// at the probe's cost, then — when the canonical decode needs more —
    /// again at its estimate, ahead of new work. The deadline is
    /// `limits.maxRenderSeconds` from when the first job starts.
    private func computeFacts(url: String, _ original: Original,
                              _ finish: @escaping @Sendable (Result<InfoResult, ServiceError>) -> Void) {
        let current = config
        let limits = current.pipelineLimits
        let seconds = current.limits.maxRenderSeconds
        let budget = current.limits.maxDecodeMemoryBytes
        guard original.file.length <= budget else {
            return finish(.failure(.imageTooLarge(
                "the original's \(original.file.length) bytes alone are over maxDecodeMemoryBytes \(budget)")))
        }
        let outcome = original.outcome
        let compute: @Sendable (_ source: [UInt8], _ header: ImageHeader,
                                _ deadline: RenderDeadline) throws(ServiceError) -> InfoResult = {
            [self] (source: [UInt8], header: ImageHeader, deadline: RenderDeadline) throws(ServiceError) -> InfoResult in
            let facts = try ThumbnailPipeline.facts(source: source, header: header, sha256: original.metadata.sha256,
                                                    deadline: deadline)
            remember(facts, url: url)
            return InfoResult(answer: keep(facts, url: url, original), cache: outcome)
        }
        let failed: @Sendable (ServiceError) -> Void = { [self] error in
            negative.remember(url, error)
            finish(.failure(error))
        }
        let admitted = RenderPlan.probeCost(sourceBytes: original.file.length, budget: budget)
        let refused: @Sendable (ServiceError) -> Void = { finish(.failure($0)) }
        submitInfoJob(cost: admitted, ahead: false, refused) { [self] in
            let started = ContinuousClock.now
            do throws(ServiceError) {
                let deadline = RenderDeadline(seconds: seconds)
                let source = try original.file.read()
                probeHook.withLock { $0 }?()
                let header = try ThumbnailPipeline.probe(source: source, limits: limits)
                if deadline.hasPassed { throw .renderTimedOut }
                let estimate = ThumbnailPipeline.canonicalDecodeMemory(header, sourceBytes: source.count)
                if estimate <= admitted { return finish(.success(try compute(source, header, deadline))) }
                let spent = (ContinuousClock.now - started) / .seconds(1)
                submitInfoJob(cost: estimate, ahead: true, refused) {
                    do throws(ServiceError) {
                        let source = try original.file.read()
                        finish(.success(try compute(source, header, RenderDeadline(seconds: seconds - spent))))
                    } catch {
                        failed(error)
                    }
                }
            } catch {
                failed(error)
            }
        }
    }

    /// One job on the render queue at the live priority; a full queue (or a
    /// cost over the whole budget) fails the look-up at once.
    /// Neither refusal is remembered: overload is momentary, and a cost over
    /// the budget depends on the configuration (as for renders).
    private func submitInfoJob(cost: Int, ahead: Bool, _ refused: @escaping @Sendable (ServiceError) -> Void,
                               _ work: @escaping @Sendable () -> Void) {
        do throws(ServiceError) {
            _ = try renders.submit(cost: cost, priority: .live, ahead: ahead, work)
        } catch {
            if case .overloaded = error { counters.withLock { $0.renderRejected += 1 } }
            refused(error)
        }
    }
}
