import ThumbJSON
import ThumbService

/// `/info`'s JSON object for one source (API.md § /info). The service keeps
/// the facts (`SourceInfo`); the wire form is built here for each answer —
/// a few hundred bytes, microseconds — so the core holds no JSON.
public struct InfoAnswer: Sendable {
    /// The JSON object, UTF-8.
    public let body: [UInt8]
    public let etag: String

    /// The object of `info`; `url` only when it has one (`thumbd info` has
    /// none). Focus fractions have 3 digits after the point.
    public init(_ info: SourceInfo) {
        let facts = info.facts
        let focus: JSONValue = .object([("x", .number(Double(facts.focus.x) / 1000)),
                                        ("y", .number(Double(facts.focus.y) / 1000))])
        var members: [(key: String, value: JSONValue)] = info.url.isEmpty ? [] : [("url", .string(info.url))]
        members += [
            ("format", .string(facts.format.rawValue)),
            ("width", .integer(facts.width)),
            ("height", .integer(facts.height)),
            ("orientation", .integer(facts.orientation)),
            ("hasAlpha", .bool(facts.hasAlpha)),
            ("animated", .bool(facts.animated)),
            ("frames", .integer(facts.frames)),
            ("bytes", .integer(info.bytes)),
            ("thumbhash", .string(facts.thumbhashBase64)),
            ("averageColor", .string(facts.averageColor)),
            ("focus", focus),
        ]
        body = Array(JSONValue.object(members).serialized().utf8)
        etag = info.etag
    }
}
