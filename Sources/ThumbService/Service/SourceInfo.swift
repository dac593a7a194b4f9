import ThumbRender

/// What `/info` tells about one source (API.md § /info): its original's
/// facts, its normalized URL and size, and the tag that changes when the
/// original does. Kept in the memory cache as it is; the API layer writes it
/// as JSON (`InfoAnswer`).
public struct SourceInfo: Sendable {
    /// The normalized source URL; empty for a local file (`thumbd info`).
    public let url: String
    /// Bytes of the original.
    public let bytes: Int
    public let facts: OriginalFacts
    /// Strong, quoted; from the original's digest and the facts' version, so
    /// every instance gives one source the same tag and a changed original a new one.
    public let etag: String

    public init(url: String, bytes: Int, facts: OriginalFacts) {
        self.url = url
        self.bytes = bytes
        self.facts = facts
        etag = Self.etag(originalSHA256: facts.sha256)
    }

    static func etag(originalSHA256 sha: String) -> String {
        let digest = Digest.sha256(Array("\(sha)|info|v\(OriginalFacts.version)".utf8))
        return "\"" + Digest.hex(Array(digest.prefix(16))) + "\""
    }

    /// What it holds on the heap (the memory cache's cost).
    var heapBytes: Int {
        url.heapBytes + facts.sha256.heapBytes + facts.thumbhash.heapBytes + facts.averageColor.heapBytes
            + etag.heapBytes
    }
}

/// `/info`'s answer for one source and where it came from (`X-Cache`).
public struct InfoResult: Sendable {
    public let info: SourceInfo
    public let cache: CacheOutcome
}
