/// Every way a download can fail. The service maps each case to its HTTP
/// answer in one place (`ServiceError.init(_: FetchError)`).
public enum FetchError: Error, Equatable, Sendable {
    /// The URL itself is unusable (not absolute, credentials, bad port).
    case badURL(String)
    /// The source rules refuse the scheme, host or address.
    case forbidden(String)
    /// The origin answered 404 or 410.
    case notFound
    /// Unreachable, reset, malformed answer, too many redirects, another status.
    case origin(String)
    /// The body passed `limits.maxSourceBytes`.
    case tooLarge(limit: Int)
    /// Connect or the whole download took too long.
    case timeout(String)
    /// The body could not be kept: its `BodySink` refused it (a full disk).
    case storage(String)
}
