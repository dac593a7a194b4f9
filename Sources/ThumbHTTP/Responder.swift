import Synchronization

/// Answers one request, exactly once, from any thread. If the client has
/// gone away the answer is dropped; `isCancelled` tells the handler early.
public final class Responder: Sendable {
    /// Weak: a handler that keeps its responder past the connection's close
    /// must not keep the connection. A reference rather than a closure
    /// capturing it saves an allocation per request.
    private weak let connection: Connection?
    private let answered = Atomic<Bool>(false)
    private let cancelled = Atomic<Bool>(false)

    init(connection: Connection) {
        self.connection = connection
    }

    /// Sends the response; later calls are ignored.
    public func respond(_ response: HTTPResponse) {
        guard !answered.exchange(true, ordering: .acquiringAndReleasing) else { return }
        connection?.responseReady(response)
    }

    /// Sends `head` (its body ignored) and returns the stream its body goes
    /// out through, in parts (`ResponseStream`). Counts as the answer: a
    /// later `respond` or `stream` is ignored, and then the stream returned
    /// drops what it is given.
    public func stream(_ head: HTTPResponse) -> ResponseStream {
        guard !answered.exchange(true, ordering: .acquiringAndReleasing) else {
            return ResponseStream(connection: nil, responder: nil)
        }
        connection?.streamReady(head)
        return ResponseStream(connection: connection, responder: self)
    }

    /// True once the connection is closed: nobody will read the answer.
    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// The figures of the server the request came in on (an application's
    /// `/stats`), read through the request rather than a reference the
    /// application keeps to its server; empty once the connection has gone.
    public var serverStatistics: ServerStatistics { connection?.server.statistics ?? ServerStatistics() }

    /// Whether that server is draining (an application's health check); true
    /// once the connection has gone.
    public var serverIsDraining: Bool { connection?.server.isDraining ?? true }

    func cancel() { cancelled.store(true, ordering: .releasing) }
}

/// The server's view of the application: called on a socket thread for every
/// request; must not block (answer later through the responder).
public typealias HTTPHandler = @Sendable (HTTPRequest, Responder) -> Void
