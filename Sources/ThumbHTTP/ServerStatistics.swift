/// What the server counts for `/stats` (SPEC §5 `requests`, `connections`).
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

/// Server limits (SPEC §8 `http`).
public struct HTTPServerConfiguration: Sendable {
    public var maxConnections = 4096
    public var maxHeaderBytes = 16_384
    public var requestTimeoutSeconds: Double = 10
    public var idleTimeoutSeconds: Double = 60

    public init(maxConnections: Int = 4096, maxHeaderBytes: Int = 16_384,
                requestTimeoutSeconds: Double = 10, idleTimeoutSeconds: Double = 60) {
        self.maxConnections = maxConnections
        self.maxHeaderBytes = maxHeaderBytes
        self.requestTimeoutSeconds = requestTimeoutSeconds
        self.idleTimeoutSeconds = idleTimeoutSeconds
    }
}
