import ThumbClock
import ThumbCodec
import ThumbRender

/// Facts that come from the shared store (SeveralInstances.md) are kept
/// only when they agree with the original's own header: whoever wrote the
/// sidecar, facts that say another format, size, orientation or frame count
/// than the bytes are computed again (with their focus, thumbhash and colour).
extension ThumbnailService {
    /// Probes `original` on a render worker (admitted at the probe's cost)
    /// and keeps `facts` in memory and beside the original on disk when they
    /// agree with its header; then `done`. A full queue, a source over the
    /// budget or a failed probe keep nothing (the facts are computed when
    /// needed, and the render says what is wrong with the file).
    func checkSharedFacts(_ facts: OriginalFacts, url: String, _ original: Original,
                          done: @escaping @Sendable () -> Void) {
        let current = config
        let limits = current.pipelineLimits
        let budget = current.limits.maxDecodeMemoryBytes
        guard Self.overBudget(original, budget: budget) == nil else { return done() }
        let admitted = RenderPlan.probeCost(sourceBytes: original.file.length, budget: budget)
        do throws(ServiceError) {
            _ = try renders.submit(cost: admitted, priority: .live) { [self] in
                defer { done() }
                let deadline = Deadline(after: .seconds(current.limits.maxRenderSeconds), on: clock)
                guard let header = try? engine.probe(original.file, limits: limits,
                                                     budget: JobBudget(deadline: deadline, admittedBytes: admitted))
                else { return }
                guard Self.agree(facts, header) else {
                    shared?.rejectFacts(url, "they do not agree with the original's header")
                    return
                }
                memory.insert(.facts(facts), for: .facts(url: url, sha256: facts.sha256))
                disk?.keepFacts(facts, url: url)
            }
        } catch {
            done()
        }
    }

    /// What the header says and the facts must say too.
    static func agree(_ facts: OriginalFacts, _ header: ImageHeader) -> Bool {
        facts.format == header.format && facts.width == header.displayedWidth && facts.height == header.displayedHeight
            && facts.orientation == header.orientation.rawValue && facts.frames == header.frames
            && (header.hasAlpha || !facts.hasAlpha)
    }
}
