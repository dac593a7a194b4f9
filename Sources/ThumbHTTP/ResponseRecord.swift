/// One completed response, for the access log.
public struct ResponseRecord: Sendable {
    public let method: String
    public let path: String
    public let status: Int
    public let bodyBytes: Int
    /// Since the request was handed to the handler.
    public let elapsed: Duration
    /// The response's `X-Cache` header, if any.
    public let cache: String?

    /// `elapsed` in milliseconds, computed when read: the conversion costs
    /// more than the rest of the record, and a server without an access log
    /// never reads it.
    public var milliseconds: Double { elapsed / .milliseconds(1) }
}
