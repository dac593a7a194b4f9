import ThumbRender

/// `q=auto` (SPEC §17, Quality.md § Automatic quality): a request's `q` resolves from
/// the source's stored result when one is known for its format, target and
/// table — then it is an ordinary look-up of that `q`'s rendition — and is
/// otherwise searched by the render that first needs it. Results are kept
/// by URL in memory (a request knows no digest before its original) and
/// with the original's facts in memory, on disk and in the shared store's
/// sidecar.
extension ThumbnailService {
    /// `request` with `q=auto` resolved from memory where a result is known.
    func resolvingAutoQuality(_ request: ThumbnailRequest) -> ThumbnailRequest {
        guard request.asksAutoQuality,
              case .autoQuality(let choices, _)? = memory.get(.autoQuality(url: request.sourceURL)) else { return request }
        return request.resolvingAutoQuality(choices, target: config.output.autoQualityTarget)
    }

    /// The results known for `original`: remembered by URL for its digest,
    /// and those kept with its facts (read from disk after a restart, or
    /// from the shared store's sidecar), which the memory entry then holds.
    func knownAutoQuality(url: String, _ original: Original) -> [AutoQuality.Choice] {
        let sha = original.metadata.sha256
        let choices = rememberedAutoQuality(url: url, sha256: sha)
        if let facts = knownFacts(url: url, original), !facts.autoQuality.isEmpty {
            let merged = AutoQuality.merged(facts.autoQuality, choices)
            if merged != choices {
                memory.insert(.autoQuality(merged, originalSHA256: sha), for: .autoQuality(url: url))
            }
            return merged
        }
        return choices
    }

    /// Keeps a search's result: by URL in memory, and with the original's
    /// facts when they are known (a writer merges what it read with its
    /// own); facts computed later take it from memory (`remember`).
    func rememberAutoQuality(_ choice: AutoQuality.Choice, url: String, _ original: Original) {
        counters.withLock { $0.autoSearches += 1 }
        let sha = original.metadata.sha256
        let choices = AutoQuality.merged(rememberedAutoQuality(url: url, sha256: sha), [choice])
        memory.insert(.autoQuality(choices, originalSHA256: sha), for: .autoQuality(url: url))
        guard var facts = knownFacts(url: url, original) else { return }
        facts.autoQuality = AutoQuality.merged(facts.autoQuality, choices)
        store(facts, url: url)
    }

    /// The results remembered in memory for `facts`' original, merged into them.
    func withRememberedAutoQuality(_ facts: OriginalFacts, url: String) -> OriginalFacts {
        let remembered = rememberedAutoQuality(url: url, sha256: facts.sha256)
        guard !remembered.isEmpty else { return facts }
        var merged = facts
        merged.autoQuality = AutoQuality.merged(facts.autoQuality, remembered)
        return merged
    }

    /// The results remembered in memory by `url` for the original of digest `sha256`
    /// (none for another digest: the URL's original changed).
    private func rememberedAutoQuality(url: String, sha256: String) -> [AutoQuality.Choice] {
        guard case .autoQuality(let remembered, sha256)? = memory.get(.autoQuality(url: url)) else { return [] }
        return remembered
    }
}

extension ThumbnailRequest {
    /// Whether a variant of this request still has `q=auto` unresolved where it matters (a lossy format).
    var asksAutoQuality: Bool {
        variant.asksAutoQuality || animationVariant?.asksAutoQuality == true
    }

    /// This request with `q=auto` resolved where `choices` know its format at `target`.
    func resolvingAutoQuality(_ choices: [AutoQuality.Choice], target: Int) -> ThumbnailRequest {
        var request = self
        request.variant = variant.resolvingAutoQuality(choices, target: target)
        request.animationVariant = animationVariant?.resolvingAutoQuality(choices, target: target)
        return request
    }
}

extension ThumbnailVariant {
    /// `q=auto` still unresolved, for a format it matters to: `format=auto`
    /// applies it when the answer is lossy (JPEG).
    var asksAutoQuality: Bool { quality == AutoQuality.unresolved && format.usesQuality }

    /// The lossy format whose result `q=auto` takes: JPEG for `auto`.
    var autoQualityFormat: OutputFormat { format == .auto ? .jpeg : format }

    func resolvingAutoQuality(_ choices: [AutoQuality.Choice], target: Int) -> ThumbnailVariant {
        guard asksAutoQuality, let q = AutoQuality.q(in: choices, format: autoQualityFormat, target: target) else {
            return self
        }
        var resolved = self
        resolved.quality = q
        return resolved
    }
}
