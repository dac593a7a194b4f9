/// A source as a request names it, parsed once (API.md § GET /thumbnail
/// `url`): its normalized spelling — the key of every cache, flight and store
/// entry — beside what the fetcher needs of it, so nothing downstream
/// normalizes or parses the text again.
public struct OriginalSource: Equatable, Sendable {
    public enum Location: Equatable, Sendable {
        /// `http`/`https`; the `SourceURL`'s `absolute` is `url`.
        case web(SourceURL)
        /// `s3://bucket/key`.
        case object(S3Location)
    }

    public let location: Location
    /// The normalized spelling.
    public let url: String
    /// The host as `url` writes it, which `origin.allowedHosts` names; nil
    /// for an `s3` source (its endpoint is configuration, not the request's).
    public let host: String?

    /// Normalizes and parses `text`: an absolute `http`, `https` or `s3` URL
    /// the fetcher could ask for (SourcesAndLimits.md, S3Sources.md).
    public init(_ text: String) throws(FetchError) {
        if S3Location.hasScheme(text) {
            let location = try S3Location(text)
            self.location = .object(location)
            url = location.normalized
            host = nil
        } else {
            let normalized = URLNormalization.normalize(text) ?? text
            location = .web(try SourceURL(normalized))
            url = normalized
            host = URLNormalization.host(ofNormalized: normalized).map(String.init) ?? ""
        }
    }
}
