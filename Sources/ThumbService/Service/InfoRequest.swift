import ThumbFetch

/// A validated `/info` request (API.md § /info): one source, nothing else.
/// `allowedSizes` and presets do not apply.
public struct InfoRequest: Hashable, Sendable {
    /// The source, parsed once; what the fetcher asks for.
    public let source: OriginalSource
    /// The normalized source URL: every spelling of one source is one source.
    public var sourceURL: String { source.url }
    /// Its host, found once: every hit checks it against `origin.allowedHosts`.
    /// nil for an `s3://` source, which that list does not cover.
    public var sourceHost: String? { source.host }

    public static func == (a: Self, b: Self) -> Bool { a.source.url == b.source.url }
    public func hash(into hasher: inout Hasher) { hasher.combine(source.url) }

    /// The parameters `GET /info` knows; any other is a `400`.
    static let knownParameters: Set<String> = ["url", "sig"]

    /// From `GET /info`'s decoded query. `reservedBucket`: the shared
    /// originals store's (`diskStore.shared.bucket`), never a source.
    public init(query: [(name: String, value: String)], reservedBucket: String? = nil) throws(ServiceError) {
        var url: String?
        var seen: Set<String> = []
        for (name, value) in query {
            guard Self.knownParameters.contains(name) else { throw .badRequest("unknown parameter '\(name)'") }
            guard seen.insert(name).inserted else { throw .badRequest("parameter '\(name)' given twice") }
            if name == "url" { url = value }
        }
        source = try Self.source(url, reservedBucket: reservedBucket)
    }

    /// From a batch item's `url` (`POST /info`).
    public init(url: String, reservedBucket: String? = nil) throws(ServiceError) {
        source = try Self.source(url, reservedBucket: reservedBucket)
    }

    static let maxURLBytes = 2048

    /// The `url` parameter's rules, shared with `/thumbnail` (API.md § GET
    /// /thumbnail): present, at most 2 KB, absolute http(s) or s3, and a URL
    /// the fetcher could ask for — what is wrong with the URL itself (a
    /// bracketed name, a zone identifier, credentials, a bad port, an invalid
    /// bucket name) is the client's fault, known before any cache or download
    /// is consulted. Whether `s3` sources are configured, and the bucket
    /// allowed, is the fetcher's to say (S3Sources.md).
    static func source(_ url: String?, reservedBucket: String? = nil) throws(ServiceError) -> OriginalSource {
        guard let url, !url.isEmpty else { throw .badRequest("missing parameter 'url'") }
        guard url.utf8.count <= maxURLBytes else { throw .badRequest("url longer than \(maxURLBytes) bytes") }
        if S3Location.hasScheme(url) {
            do throws(FetchError) { return try OriginalSource(url) } catch {
                // The shared store's bucket in another case is no bucket name, but a store addressed by
                // host name (virtual-host style) folds case: refused as the bucket itself (SeveralInstances.md).
                if let reservedBucket, S3Location.bucketAsWritten(url).lowercased() == reservedBucket {
                    throw .forbiddenSource("bucket \(reservedBucket) holds the shared originals store, never a source")
                }
                throw ServiceError(error)
            }
        }
        let lower = url.prefix(8).lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            throw .badRequest("url must be an absolute http, https or s3 URL")
        }
        do throws(FetchError) { return try OriginalSource(url) } catch { throw ServiceError(error) }
    }
}
