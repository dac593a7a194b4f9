import Foundation
import Synchronization
import Testing
import ThumbHTTP


/// A real origin on 127.0.0.1 (our own HTTP server on an ephemeral port) with
/// fault modes chosen by path. Counts hits per path.
public final class TestOrigin: Sendable {
    public let server: HTTPServer
    public let port: UInt16
    private let counter = HitCounter()
    public static let jpeg: [UInt8] = [UInt8](FileManager.default.contents(atPath: URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().appendingPathComponent("../ThumbCodecTests/Fixtures/rocket.jpg").standardized.path)!)

    /// `extraRoutes`: bodies a test builds, served with 200 by path.
    public init(extraRoutes: [String: [UInt8]] = [:]) throws {
        let counter = self.counter
        let box = PortBox()
        server = HTTPServer(configuration: HTTPServerConfiguration()) { request, responder in
            counter.hit(request.path)
            if let body = extraRoutes[request.path] {
                return responder.respond(HTTPResponse(status: 200, body: body))
            }
            Self.route(request, responder, port: box.port)
        }
        port = try server.listen(ListenAddress.inet(host: "127.0.0.1", port: 0))
        box.port = port
    }

    /// Closes the listener and every connection (waits ≤ 5 s): a test stops the origin it started.
    public func stop(sourceLocation: SourceLocation = #_sourceLocation) { server.stop(sourceLocation: sourceLocation) }

    public func hits(_ path: String) -> Int { counter.count(path) }
    public var totalHits: Int { counter.total }
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Delayed answers run on a queue of their own: tests block threads of the
    /// shared pools while they wait for this origin.
    private static let later = DispatchQueue(label: "test-origin.later", attributes: .concurrent)

    private static func route(_ request: HTTPRequest, _ responder: Responder, port: UInt16) {
        let path = request.path
        switch path {
        case "/cat.jpg", "/slowish.jpg":
            if request.header("If-None-Match") == "\"v1\"" {
                var r = HTTPResponse(status: 304, headers: [("ETag", "\"v1\"")])
                r.omitBody = true
                return responder.respond(r)
            }
            let response = HTTPResponse(status: 200, headers: [("Content-Type", "image/jpeg"), ("ETag", "\"v1\""),
                                                               ("Last-Modified", "Sun, 22 Nov 2026 10:00:00 GMT")], body: jpeg)
            if path == "/slowish.jpg" {
                later.asyncAfter(deadline: .now() + 0.2) { responder.respond(response) }
            } else {
                responder.respond(response)
            }
        case _ where path.hasPrefix("/formats/") && !path.contains(".."):
            // The codec tests' real WebP, GIF, AVIF and HEIC files.
            let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../ThumbCodecTests/Fixtures" + path).standardized.path
            if let data = FileManager.default.contents(atPath: file) {
                responder.respond(HTTPResponse(status: 200, body: [UInt8](data)))
            } else {
                responder.respond(HTTPResponse(status: 404))
            }
        case "/text.txt": responder.respond(HTTPResponse(status: 200, body: Array("hello".utf8)))
        case "/empty.jpg": responder.respond(HTTPResponse(status: 200))
        case "/truncated.jpg": responder.respond(HTTPResponse(status: 200, body: Array(jpeg.prefix(jpeg.count / 2))))
        case "/missing.jpg": responder.respond(HTTPResponse(status: 404))
        case "/gone.jpg": responder.respond(HTTPResponse(status: 410))
        case "/error.jpg": responder.respond(HTTPResponse(status: 500))
        case "/big.bin": responder.respond(HTTPResponse(status: 200, body: [UInt8](repeating: 0, count: 3 << 20)))
        case "/slow.jpg":
            later.asyncAfter(deadline: .now() + 2) { responder.respond(HTTPResponse(status: 200, body: jpeg)) }
        case "/relative": responder.respond(HTTPResponse(status: 302, headers: [("Location", "/cat.jpg")]))
        case "/loop": responder.respond(HTTPResponse(status: 302, headers: [("Location", "/loop")]))
        case "/to-ftp": responder.respond(HTTPResponse(status: 301, headers: [("Location", "ftp://127.0.0.1/cat.jpg")]))
        case "/to-file": responder.respond(HTTPResponse(status: 307, headers: [("Location", "file:///etc/passwd")]))
        case "/to-localhost": responder.respond(HTTPResponse(status: 302, headers: [("Location", "http://localhost:\(port)/cat.jpg")]))
        default:
            if path.hasPrefix("/hop/"), let n = Int(path.dropFirst(5)) {
                let next = n > 1 ? "/hop/\(n - 1)" : "/cat.jpg"
                return responder.respond(HTTPResponse(status: 301, headers: [("Location", "http://127.0.0.1:\(port)\(next)")]))
            }
            responder.respond(HTTPResponse(status: 404))
        }
    }
}

public final class HitCounter: Sendable {
    private let hits = Mutex<[String: Int]>([:])
    public func hit(_ path: String) { hits.withLock { $0[path, default: 0] += 1 } }
    public func count(_ path: String) -> Int { hits.withLock { $0[path] ?? 0 } }
    public var total: Int { hits.withLock { $0.values.reduce(0, +) } }
}

private final class PortBox: @unchecked Sendable {
    public var port: UInt16 = 0
}
