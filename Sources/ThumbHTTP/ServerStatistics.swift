/// What the server counts for `/stats` (README § Statistics `requests`, `connections`).
public struct ServerStatistics: Equatable, Sendable {
    public var connectionsOpen = 0
    public var connectionsAccepted = 0
    public var requestsTotal = 0
    public var requestsActive = 0
    /// Responses by status code, the server's own error responses included.
    public var byStatus: [Int: Int] = [:]

    public init() {}
}

/// One completed response, for the access log.
public struct ResponseRecord: Sendable {
    public let method: String
    public let path: String
    public let status: Int
    public let bodyBytes: Int
    public let milliseconds: Double
    /// The response's `X-Cache` header, if any.
    public let cache: String?
}

/// Server limits (the `http` section of the configuration). The defaults
/// here are the built-in ones; the service's configuration uses this type.
public struct HTTPServerConfiguration: Equatable, Sendable {
    /// Open connections; more are accepted and closed at once.
    public var maxConnections: Int
    /// Bytes of a request head; more is `431`.
    public var maxHeaderBytes: Int
    /// Seconds to receive a request head; then `408`.
    public var requestTimeoutSeconds: Double
    /// Seconds a kept-alive connection may wait for its next request.
    public var idleTimeoutSeconds: Double

    public init(maxConnections: Int = 4096, maxHeaderBytes: Int = 16_384,
                requestTimeoutSeconds: Double = 10, idleTimeoutSeconds: Double = 60) {
        self.maxConnections = maxConnections
        self.maxHeaderBytes = maxHeaderBytes
        self.requestTimeoutSeconds = requestTimeoutSeconds
        self.idleTimeoutSeconds = idleTimeoutSeconds
    }
}
