import Synchronization

/// The body of a streamed response, written in parts as the application has
/// them (HTTPServer.md, Streamed responses): `Responder.stream(_:)` sends the
/// head, each `write(_:)` one part, `end()` the end of the body. HTTP/1.1
/// frames the parts as chunks; an HTTP/1.0 client gets them bare and the
/// connection closes after the last.
///
/// Each part is charged to `http.maxPendingResponseBytes` when it goes out
/// and credited as the socket takes it; parts that arrive meanwhile wait in
/// the connection and go out together as the next part. Nothing else is
/// written on the connection between parts. While no part is out, no send
/// timeout runs: a stream waiting for its next part is not a response
/// without progress. From any thread; once the connection has closed
/// (`isCancelled`) parts are dropped. Dropping the stream ends it.
public final class ResponseStream: Sendable {
    private weak let connection: Connection?
    private let responder: Responder?
    private let ended = Atomic<Bool>(false)

    init(connection: Connection?, responder: Responder?) {
        self.connection = connection
        self.responder = responder
    }

    /// Queues `part` (an empty one is nothing); ignored after `end()`.
    public func write(_ part: [UInt8]) {
        guard !part.isEmpty, !ended.load(ordering: .acquiring) else { return }
        connection?.partQueued(part)
    }

    /// Ends the body once the parts queued are out; later calls are ignored.
    public func end() {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        connection?.streamEnded()
    }

    /// True once the connection is closed: nobody reads the parts.
    public var isCancelled: Bool { responder?.isCancelled ?? true }

    deinit { end() }
}
