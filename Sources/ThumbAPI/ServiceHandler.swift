import ThumbService
import ThumbJSON
import Foundation
import ThumbHTTP

/// Routes HTTP requests to the thumbnail service (README § Endpoints, § Output). Runs on the
/// server's I/O threads and never blocks: thumbnails answer through the
/// service's completion, on whatever thread finishes them.
public final class ServiceHandler: Sendable {
    private let service: ThumbnailService
    private let prefetcher: Prefetcher
    private let durations = RequestDurationHistogram()
    private let started = Date()
    /// The server's figures and drain state; set once the server exists.
    private let serverStatistics: @Sendable () -> ServerStatistics
    private let isDraining: @Sendable () -> Bool

    public init(service: ThumbnailService, serverStatistics: @escaping @Sendable () -> ServerStatistics,
                isDraining: @escaping @Sendable () -> Bool) {
        self.service = service
        prefetcher = Prefetcher(service: service, concurrency: 2 * service.renders.workerCount)
        self.serverStatistics = serverStatistics
        self.isDraining = isDraining
    }

    private enum Route {
        case thumbnail, healthz, stats, metrics, prefetch, cache

        init?(path: String) {
            switch path {
            case "/thumbnail": self = .thumbnail
            case "/healthz": self = .healthz
            case "/stats": self = .stats
            case "/metrics": self = .metrics
            case "/prefetch": self = .prefetch
            case "/cache": self = .cache
            default: return nil
            }
        }

        /// The methods this path answers, in `Allow` order (README § Endpoints: `HEAD` wherever `GET`).
        var methods: [String] {
            switch self {
            case .thumbnail, .healthz, .stats, .metrics: Self.readOnly
            case .prefetch: Self.post
            case .cache: Self.delete
            }
        }

        private static let readOnly = ["GET", "HEAD"], post = ["POST"], delete = ["DELETE"]

        var isAdmin: Bool { self == .stats || self == .metrics || self == .prefetch || self == .cache }
    }

    public func handle(_ request: HTTPRequest, _ responder: Responder) {
        guard let route = Route(path: request.path) else { return responder.respond(ServiceError.notFound.response) }
        guard route.methods.contains(request.method) else {
            return responder.respond(ServiceError.methodNotAllowed(allow: route.methods.joined(separator: ", ")).response)
        }
        let config = service.config
        if route.isAdmin, !AdminToken.permits(authorization: request.header("Authorization"), token: config.security.adminToken) {
            return responder.respond(ServiceError.unauthorized.response)
        }
        switch route {
        case .thumbnail: thumbnail(request, config, responder)
        case .healthz:
            responder.respond(isDraining()
                ? HTTPResponse(status: 503, headers: [("Content-Type", "text/plain")], body: Array("draining".utf8))
                : HTTPResponse(status: 200, headers: [("Content-Type", "text/plain")], body: Array("ok".utf8)))
        case .stats: responder.respond(HTTPResponse.json(status: 200, report.json.serialized()))
        case .metrics:
            let text = MetricsExposition.render(figures: report.figures, durations: durations.snapshot())
            responder.respond(HTTPResponse(status: 200, headers: [("Content-Type", MetricsExposition.contentType)],
                                           body: Array(text.utf8)))
        case .prefetch: prefetch(request, config, responder)
        case .cache: purge(request, responder)
        }
    }

    /// For the server's `onResponse`: feeds the request-duration histogram of `/metrics`.
    public func record(_ response: ResponseRecord) {
        durations.observe(seconds: response.milliseconds / 1000, outcome: .init(xCache: response.cache))
    }

    var report: StatisticsReport {
        StatisticsReport(uptimeSeconds: Date().timeIntervalSince(started), service: service.statistics,
                         prefetch: prefetcher.statistics, server: serverStatistics())
    }

    private func thumbnail(_ request: HTTPRequest, _ config: ServiceConfiguration, _ responder: Responder) {
        // The signature first: an unsigned request learns nothing, not even which parameter is wrong.
        if let key = config.security.signingKey, !URLSignature.verify(target: request.target, key: key) {
            return responder.respond(Self.thumbnailError(.badSignature, config.output, varies: false))
        }
        let parsed: ThumbnailRequest
        do {
            parsed = try ThumbnailRequest(query: request.query, config: config, accept: request.header("Accept"))
        } catch {
            return responder.respond(Self.thumbnailError(error, config.output, varies: false))
        }
        let ifNoneMatch = request.header("If-None-Match")
        let varies = parsed.variesByAccept
        service.thumbnail(parsed) { result in
            switch result {
            case .failure(let error):
                responder.respond(Self.thumbnailError(error, config.output, varies: varies))
            case .success(let answer):
                let r = answer.rendition
                var headers: [(name: String, value: String)] = [
                    ("Content-Type", r.contentType), ("ETag", r.etag),
                    ("Cache-Control", Self.cacheControl(config.output)),
                    ("X-Cache", answer.cache.rawValue),
                ]
                if varies { headers.append(("Vary", "Accept")) }
                if let ifNoneMatch, Self.matches(ifNoneMatch, r.etag) {
                    var notModified = HTTPResponse(status: 304, headers: headers)
                    notModified.omitBody = true
                    return responder.respond(notModified)
                }
                headers += [("X-Image-Width", String(r.width)), ("X-Image-Height", String(r.height))]
                responder.respond(HTTPResponse(status: 200, headers: headers, body: r.bytes))
            }
        }
    }

    /// `Cache-Control` of a thumbnail: `stale-while-revalidate` only when set.
    static func cacheControl(_ output: ServiceConfiguration.Output) -> String {
        let swr = output.staleWhileRevalidateSeconds
        return "public, max-age=\(output.cacheMaxAgeSeconds)" + (swr > 0 ? ", stale-while-revalidate=\(swr)" : "")
    }

    /// A `/thumbnail` error: answers about the source itself (404, 415, 422)
    /// may be cached briefly so a CDN does not hammer it; transient ones
    /// (502, 503, 504) and refusals must not be, or an outage is cached.
    static func thumbnailError(_ error: ServiceError, _ output: ServiceConfiguration.Output,
                               varies: Bool) -> HTTPResponse {
        var response = error.response
        response.headers.append(("Cache-Control", error.isLasting ? "public, max-age=\(output.errorMaxAgeSeconds)" : "no-store"))
        if varies { response.headers.append(("Vary", "Accept")) }
        return response
    }

    /// `POST /prefetch` (README § Prefetch): validated whole, queued, answered at once.
    private func prefetch(_ request: HTTPRequest, _ config: ServiceConfiguration, _ responder: Responder) {
        do throws(ServiceError) {
            let batch = try PrefetchBatch(body: request.body, config: config)
            try prefetcher.submit(batch.items)
            responder.respond(HTTPResponse.json(status: 202,
                                                JSONValue.object([("accepted", .integer(batch.items.count))]).serialized()))
        } catch {
            responder.respond(error.response)
        }
    }

    /// `DELETE /cache?url=SOURCE` (README § Endpoints).
    private func purge(_ request: HTTPRequest, _ responder: Responder) {
        guard request.query.count == 1, request.query[0].name == "url", !request.query[0].value.isEmpty else {
            return responder.respond(ServiceError.badRequest("DELETE /cache takes exactly one parameter, url").response)
        }
        let removed = service.purge(request.query[0].value)
        responder.respond(HTTPResponse.json(status: 200, JSONValue.object([("removed", .integer(removed))]).serialized()))
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
