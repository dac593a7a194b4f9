import Foundation
import ThumbHTTP

/// Routes HTTP requests to the thumbnail service (SPEC §2, §3.2). Runs on the
/// server's I/O threads and never blocks: thumbnails answer through the
/// service's completion, on whatever thread finishes them.
public final class ServiceHandler: Sendable {
    private let service: ThumbnailService
    private let started = Date()
    /// The server's figures and drain state; set once the server exists.
    private let serverStatistics: @Sendable () -> ServerStatistics
    private let isDraining: @Sendable () -> Bool

    public init(service: ThumbnailService, serverStatistics: @escaping @Sendable () -> ServerStatistics,
                isDraining: @escaping @Sendable () -> Bool) {
        self.service = service
        self.serverStatistics = serverStatistics
        self.isDraining = isDraining
    }

    public func handle(_ request: HTTPRequest, _ responder: Responder) {
        let readOnly = request.method == "GET" || request.method == "HEAD"
        switch request.path {
        case "/thumbnail":
            guard readOnly else { return responder.respond(ServiceError.methodNotAllowed(allow: "GET, HEAD").response) }
            thumbnail(request, responder)
        case "/healthz":
            guard readOnly else { return responder.respond(ServiceError.methodNotAllowed(allow: "GET, HEAD").response) }
            responder.respond(isDraining()
                ? HTTPResponse(status: 503, headers: [("Content-Type", "text/plain")], body: Array("draining".utf8))
                : HTTPResponse(status: 200, headers: [("Content-Type", "text/plain")], body: Array("ok".utf8)))
        case "/stats":
            guard readOnly else { return responder.respond(ServiceError.methodNotAllowed(allow: "GET, HEAD").response) }
            responder.respond(HTTPResponse.json(status: 200, statistics.serialized()))
        default:
            responder.respond(ServiceError.notFound.response)
        }
    }

    var statistics: JSONValue {
        let config = service.config
        return StatisticsReport(uptimeSeconds: Date().timeIntervalSince(started), memory: service.memory.statistics,
                                disk: service.disk?.statistics, counters: service.counters.withLock { $0 },
                                render: service.renders.statistics, server: serverStatistics(),
                                memoryLimit: config.memoryCacheBytes, diskLimit: config.diskStore.maxBytes).json
    }

    private func thumbnail(_ request: HTTPRequest, _ responder: Responder) {
        let config = service.config
        let parsed: ThumbnailRequest
        do {
            parsed = try ThumbnailRequest(query: request.query, config: config)
        } catch {
            return responder.respond(error.response)
        }
        let ifNoneMatch = request.header("If-None-Match")
        service.thumbnail(parsed) { result in
            switch result {
            case .failure(let error):
                responder.respond(error.response)
            case .success(let answer):
                let r = answer.rendition
                let headers: [(name: String, value: String)] = [
                    ("Content-Type", r.contentType), ("ETag", r.etag),
                    ("Cache-Control", "public, max-age=\(config.output.cacheMaxAgeSeconds)"),
                    ("X-Cache", answer.cache.rawValue),
                    ("X-Image-Width", String(r.width)), ("X-Image-Height", String(r.height)),
                ]
                if let ifNoneMatch, Self.matches(ifNoneMatch, r.etag) {
                    var notModified = HTTPResponse(status: 304, headers: headers)
                    notModified.omitBody = true
                    return responder.respond(notModified)
                }
                responder.respond(HTTPResponse(status: 200, headers: headers, body: r.bytes))
            }
        }
    }

    /// `If-None-Match`: `*` or a list of entity tags, weak ones compared weakly (RFC 9110 §13.1.2).
    static func matches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { candidate in
            var tag = candidate.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == etag
        }
    }
}
