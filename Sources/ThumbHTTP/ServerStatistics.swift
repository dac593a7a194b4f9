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
