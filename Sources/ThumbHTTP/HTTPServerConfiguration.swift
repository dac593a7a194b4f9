/// Server limits (the `http` section of the configuration). The defaults
/// here are the built-in ones; ThumbAPI's `DaemonConfiguration.http` is this type.
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
