import ThumbJSON
/// What the disk store keeps beside an original's bytes.
public struct OriginalMetadata: Equatable, Sendable {
    /// The source URL; checked on read so a hash collision can never serve another image.
    public var url: String
    public var etag: String?
    public var lastModified: String?
    /// Seconds since 1970 when the origin last confirmed these bytes (fetch or 304).
    public var fetchedAt: Double
    /// Bytes of the original.
    public var length: Int
    /// Hex SHA-256 of the original: the stable half of every variant's ETag.
    public var sha256: String
    /// The address the original was fetched from (SourcesAndLimits.md
    /// "Re-checked on hits"); nil for files stored before it was kept.
    public var address: String?

    public init(url: String, etag: String?, lastModified: String?, fetchedAt: Double, length: Int, sha256: String,
                address: String? = nil) {
        self.url = url
        self.etag = etag
        self.lastModified = lastModified
        self.fetchedAt = fetchedAt
        self.length = length
        self.sha256 = sha256
        self.address = address
    }

    var json: JSONValue {
        .object([
            ("url", .string(url)),
            ("etag", etag.map(JSONValue.string) ?? .null),
            ("lastModified", lastModified.map(JSONValue.string) ?? .null),
            ("fetchedAt", .number(fetchedAt)),
            ("length", .integer(length)),
            ("sha256", .string(sha256)),
            ("address", address.map(JSONValue.string) ?? .null),
        ])
    }

    init?(json: JSONValue) {
        guard case .object(let members) = json else { return nil }
        var fields: [String: JSONValue] = [:]
        for (k, v) in members { fields[k] = v }
        guard case .string(let url)? = fields["url"], case .integer(let length)? = fields["length"],
              case .string(let sha)? = fields["sha256"], length >= 0 else { return nil }
        let fetchedAt: Double
        switch fields["fetchedAt"] {
        case .number(let d)?: fetchedAt = d
        case .integer(let i)?: fetchedAt = Double(i)
        default: return nil
        }
        func optionalString(_ v: JSONValue?) -> String? {
            if case .string(let s)? = v { return s }
            return nil
        }
        self.init(url: url, etag: optionalString(fields["etag"]), lastModified: optionalString(fields["lastModified"]),
                  fetchedAt: fetchedAt, length: length, sha256: sha, address: optionalString(fields["address"]))
    }
}
