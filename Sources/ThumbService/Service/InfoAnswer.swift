import ThumbJSON
import ThumbRender

/// `/info`'s answer for one source (API.md § /info), serialized once: a
/// memory hit hands over these bytes, and a batch joins them.
public struct InfoAnswer: Sendable {
    /// The JSON object, UTF-8.
    public let body: [UInt8]
    /// Strong, quoted; from the original's digest and the facts' version, so
    /// every instance gives one source the same tag and a changed original a new one.
    public let etag: String

    /// The object of `facts` for `url` (the normalized source), whose
    /// original is `bytes` long. Focus fractions have 3 digits after the point.
    public init(url: String, bytes: Int, facts: OriginalFacts) {
        let focus: JSONValue = .object([("x", .number(Double(facts.focus.x) / 1000)),
                                        ("y", .number(Double(facts.focus.y) / 1000))])
        var members: [(key: String, value: JSONValue)] = url.isEmpty ? [] : [("url", .string(url))]
        members += [
            ("format", .string(facts.format.rawValue)),
            ("width", .integer(facts.width)),
            ("height", .integer(facts.height)),
            ("orientation", .integer(facts.orientation)),
            ("hasAlpha", .bool(facts.hasAlpha)),
            ("animated", .bool(facts.animated)),
            ("frames", .integer(facts.frames)),
            ("bytes", .integer(bytes)),
            ("thumbhash", .string(facts.thumbhashBase64)),
            ("averageColor", .string(facts.averageColor)),
            ("focus", focus),
        ]
        body = Array(JSONValue.object(members).serialized().utf8)
        etag = Self.etag(originalSHA256: facts.sha256)
    }

    static func etag(originalSHA256 sha: String) -> String {
        let digest = Digest.sha256(Array("\(sha)|info|v\(OriginalFacts.version)".utf8))
        return "\"" + Digest.hex(Array(digest.prefix(16))) + "\""
    }
}

/// An `/info` answer and where it came from (`X-Cache`).
public struct InfoResult: Sendable {
    public let answer: InfoAnswer
    public let cache: CacheOutcome
}
