/// What the server counts for `/stats` (Statistics.md `requests`, `connections`).
public struct ServerStatistics: Equatable, Sendable {
    public var connectionsOpen = 0
    public var connectionsAccepted = 0
    public var requestsTotal = 0
    public var requestsActive = 0
    /// Responses by status code, the server's own error responses included.
    public var byStatus: [Int: Int] = [:]
    /// Response bytes queued for clients now, across connections (at most
    /// `http.maxPendingResponseBytes`, HTTPServer.md).
    public var pendingResponseBytes = 0
    /// The most `pendingResponseBytes` has been since start.
    public var pendingResponseBytesPeak = 0
    /// Bytes of finished responses waiting for room in that budget now (also
    /// at most `http.maxPendingResponseBytes`).
    public var pendingResponseBytesWaiting = 0
    /// The most `pendingResponseBytesWaiting` has been since start.
    public var pendingResponseBytesWaitingPeak = 0
    /// Connections closed to make room for responses waiting on that budget.
    public var connectionsClosedForRoom = 0
    /// Responses replaced by `503` because neither the budget nor the line of
    /// waiting responses had room for them.
    public var responsesRefusedForRoom = 0
    /// Connections closed because their client took nothing for `http.sendTimeoutSeconds`.
    public var sendTimeouts = 0
    /// accept(2) failures for want of descriptors or memory.
    public var acceptFailures = 0

    public init() {}
}

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
    /// Seconds a response may go without the client taking any of it; then
    /// the connection closes. 30 by default; fractions allowed.
    public var sendTimeoutSeconds: Double
    /// Bytes of responses queued for clients across all connections; past
    /// it, responses wait (at most as many bytes again) and the connections
    /// that made no progress for longest are closed; past both, `503`.
    /// 256 MiB by default.
    public var maxPendingResponseBytes: Int

    public init(maxConnections: Int = 4096, maxHeaderBytes: Int = 16_384,
                requestTimeoutSeconds: Double = 10, idleTimeoutSeconds: Double = 60,
                sendTimeoutSeconds: Double = 30, maxPendingResponseBytes: Int = 268_435_456) {
        self.maxConnections = maxConnections
        self.maxHeaderBytes = maxHeaderBytes
        self.requestTimeoutSeconds = requestTimeoutSeconds
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.sendTimeoutSeconds = sendTimeoutSeconds
        self.maxPendingResponseBytes = maxPendingResponseBytes
    }
}
