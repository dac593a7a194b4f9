import Foundation
import Synchronization
import Testing
import ThumbHTTP

/// A loopback origin (our HTTP server on 127.0.0.1) that holds every request
/// until the test opens it, then answers each with the rocket JPEG: a download
/// that lasts exactly as long as the test needs, ordered by a gate, not a delay.
public final class GatedOrigin: Sendable {
    public let server: HTTPServer
    public let port: UInt16
    private let gate: Gate

    /// Shared by the server's handler and the test.
    private final class Gate: Sendable {
        let state = Mutex<(open: Bool, held: [Responder])>((false, []))

        func arrive(_ responder: Responder) {
            let answerNow = state.withLock { s in
                if !s.open { s.held.append(responder) }
                return s.open
            }
            if answerNow { responder.respond(GatedOrigin.answer) }
        }
    }

    public init() throws {
        let gate = Gate()
        self.gate = gate
        server = HTTPServer(configuration: HTTPServerConfiguration()) { _, responder in gate.arrive(responder) }
        port = try server.listen(ListenAddress.inet(host: "127.0.0.1", port: 0))
    }

    fileprivate static let answer = HTTPResponse(status: 200, headers: [("Content-Type", "image/jpeg")],
                                                 body: TestOrigin.jpeg)

    /// Closes the listener and every connection (waits ≤ 5 s): a test stops the origin it started.
    public func stop(sourceLocation: SourceLocation = #_sourceLocation) { server.stop(sourceLocation: sourceLocation) }

    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Requests received and not yet answered.
    public var waiting: Int { gate.state.withLock { $0.held.count } }

    /// Answers the held requests, and every later one at once.
    public func open() {
        let held = gate.state.withLock { s in
            s.open = true
            defer { s.held = [] }
            return s.held
        }
        for responder in held { responder.respond(Self.answer) }
    }
}
