import Synchronization

/// Answers one request, exactly once, from any thread. If the client has
/// gone away the answer is dropped; `isCancelled` tells the handler early.
public final class Responder: Sendable {
    private let deliver: @Sendable (HTTPResponse) -> Void
    private let answered = Atomic<Bool>(false)
    private let cancelled = Atomic<Bool>(false)

    init(deliver: @escaping @Sendable (HTTPResponse) -> Void) {
        self.deliver = deliver
    }

    /// Sends the response; later calls are ignored.
    public func respond(_ response: HTTPResponse) {
        guard !answered.exchange(true, ordering: .acquiringAndReleasing) else { return }
        deliver(response)
    }

    /// True once the connection is closed: nobody will read the answer.
    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    func cancel() { cancelled.store(true, ordering: .releasing) }
}

/// The server's view of the application: called on a socket thread for every
/// request; must not block (answer later through the responder).
public typealias HTTPHandler = @Sendable (HTTPRequest, Responder) -> Void
