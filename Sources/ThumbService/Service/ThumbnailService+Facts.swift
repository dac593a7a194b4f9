import ThumbImaging
import ThumbRender

/// An original's facts (`OriginalFacts`): looked up in memory, then beside
/// the original on disk, and kept in both once computed, so only the first
/// render that needs them (or `/info`) looks at the pixels for them.
extension ThumbnailService {
    /// The facts known for `original`, from memory or disk; nil when they
    /// must be computed. On a render worker (the disk read is a small file).
    func knownFacts(url: String, _ original: Original) -> OriginalFacts? {
        let sha = original.metadata.sha256
        if case .facts(let facts)? = memory.get(.facts(url: url, sha256: sha)) { return facts }
        guard let facts = disk?.facts(url: url, sha256: sha) else { return nil }
        memory.insert(.facts(facts), for: .facts(url: url, sha256: sha))
        return facts
    }

    /// Whether facts computed now would be kept anywhere: in memory, or
    /// beside the original on disk. When neither can hold them, a render that
    /// does not need the focus computes none (each render would compute them
    /// again, for nothing).
    func canKeepFacts(url: String) -> Bool {
        memory.statistics.limitBytes > 0 || disk?.holds(url: url) == true
    }

    /// Keeps freshly computed facts in memory and beside the original on
    /// disk (when the store keeps the original), with the `q=auto` results
    /// a render found before them.
    func remember(_ facts: OriginalFacts, url: String) {
        counters.withLock { $0.factsComputed += 1 }
        store(withRememberedAutoQuality(facts, url: url), url: url)
    }

    /// Keeps facts in memory, beside the original on disk, and in the shared store's sidecar.
    func store(_ facts: OriginalFacts, url: String) {
        memory.insert(.facts(facts), for: .facts(url: url, sha256: facts.sha256))
        disk?.keepFacts(facts, url: url)
        // The shared copy's sidecar gets them too, so other instances never compute them (SeveralInstances.md).
        if let shared, shared.isEnabled, let metadata = disk?.storedMetadata(url: url), metadata.sha256 == facts.sha256 {
            shared.update(url, metadata: metadata, facts: facts)
        }
    }
}
