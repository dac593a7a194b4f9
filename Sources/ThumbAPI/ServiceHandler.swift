import ThumbService
import ThumbJSON
import Foundation
import ThumbHTTP
import Synchronization

/// Routes HTTP requests to the thumbnail service (API.md § Endpoints, API.md § Output). Runs on the
/// server's I/O threads and never blocks: thumbnails answer through the
/// service's completion, on whatever thread finishes them.
public final class ServiceHandler: Sendable {
    let service: ThumbnailService
    private let prefetcher: Prefetcher
    private let durations = RequestDurationHistogram()
    private let shortcuts = HitShortcuts()
    /// `GET /info` hits by spelling; a quarter of the thumbnails' budget (one entry per source, not per variant).
    let infoShortcuts = InfoShortcuts(limitBytes: 2 << 20)
    /// Streamed `POST /info` answers not yet ended, by id: a drain ends them (`endStreams`).
    let openStreams = Mutex<(next: Int, answers: [Int: InfoStreamAnswer])>((0, [:]))
    /// Signing key and admin token: the daemon's keys, not the service's,
    /// replaced together with the service's on a reload.
    private let security: Mutex<DaemonConfiguration.Security>
    /// Told the detail of every `500 internal_error`, which the client gets
    /// without it (Errors.md): a bug or a disk that failed mid-download must
    /// reach the operator's log. Read once per such error only.
    private let internalErrorLog = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Where the details of `500 internal_error` answers go; thumbd logs them at `error`. Set it before listening.
    public func setInternalErrorLog(_ log: (@Sendable (String) -> Void)?) {
        internalErrorLog.withLock { $0 = log }
    }

    /// Passes an internal error's detail, with the request it answered, to the log.
    func report(_ error: ServiceError, _ request: HTTPRequest) {
        guard case .internalError(let detail) = error, let log = internalErrorLog.withLock({ $0 }) else { return }
        log("\(request.method) \(request.target): \(detail)")
    }

    public init(service: ThumbnailService, security: DaemonConfiguration.Security) {
        self.service = service
        self.security = Mutex(security)
        prefetcher = Prefetcher(service: service, concurrency: 2 * service.renders.workerCount)
    }

    private enum Route {
        case thumbnail, info, healthz, stats, metrics, prefetch, cache

        init?(path: String) {
            switch path {
            case "/thumbnail": self = .thumbnail
            case "/info": self = .info
            case "/healthz": self = .healthz
            case "/stats": self = .stats
            case "/metrics": self = .metrics
            case "/prefetch": self = .prefetch
            case "/cache": self = .cache
            default: return nil
            }
        }

        /// The methods this path answers, in `Allow` order (API.md § Endpoints: `HEAD` wherever `GET`).
        var methods: [String] {
            switch self {
            case .thumbnail, .healthz, .stats, .metrics: Self.readOnly
            case .info: Self.readOnly + Self.post
            case .prefetch: Self.post
            case .cache: Self.delete
            }
        }

        private static let readOnly = ["GET", "HEAD"], post = ["POST"], delete = ["DELETE"]

        var isAdmin: Bool { self == .stats || self == .metrics || self == .prefetch || self == .cache }
    }

    /// What a request's head alone decides (unknown path, wrong method,
    /// missing admin token); nil when the request may go on. The server asks
    /// this before reading a body sent with `Expect: 100-continue`.
    public func refusal(head request: HTTPRequest) -> HTTPResponse? {
        guard let route = Route(path: request.path) else { return APIError.notFound.response }
        return refusal(request, route)
    }

    /// Reads the configuration only for admin routes: `/thumbnail`, the hot
    /// path, needs none here.
    private func refusal(_ request: HTTPRequest, _ route: Route) -> HTTPResponse? {
        guard route.methods.contains(request.method) else {
            return APIError.methodNotAllowed(allow: route.methods.joined(separator: ", ")).response
        }
        if route.isAdmin, !AdminToken.permits(authorization: request.header("Authorization"),
                                              token: security.withLock(\.adminToken)) {
            return APIError.unauthorized.response
        }
        return nil
    }

    public func handle(_ request: HTTPRequest, _ responder: Responder) {
        guard let route = Route(path: request.path) else { return responder.respond(APIError.notFound.response) }
        if let refused = refusal(request, route) { return responder.respond(refused) }
        switch route {
        case .thumbnail: thumbnail(request, responder)
        case .info: request.method == "POST" ? infoBatch(request, responder) : info(request, responder)
        case .healthz:
            responder.respond(responder.serverIsDraining
                ? HTTPResponse(status: 503, headers: [("Content-Type", "text/plain")], body: Array("draining".utf8))
                : HTTPResponse(status: 200, headers: [("Content-Type", "text/plain")], body: Array("ok".utf8)))
        case .stats:
            responder.respond(HTTPResponse.json(status: 200, report(server: responder.serverStatistics).json.serialized()))
        case .metrics:
            let text = MetricsExposition.render(figures: report(server: responder.serverStatistics).figures,
                                                durations: durations.snapshot())
            responder.respond(HTTPResponse(status: 200, headers: [("Content-Type", MetricsExposition.contentType)],
                                           body: Array(text.utf8)))
        case .prefetch: prefetch(request, service.config, responder)
        case .cache: purge(request, responder)
        }
    }

    /// The signing key now (a reload may replace it).
    var signingKey: String? { security.withLock(\.signingKey) }

    /// For the server's `onResponse`: feeds the request-duration histogram of `/metrics`.
    /// A reload's new signing key and admin token.
    func update(security new: DaemonConfiguration.Security) {
        security.withLock { $0 = new }
    }

    public func record(_ response: ResponseRecord) {
        durations.observe(seconds: response.milliseconds / 1000, outcome: .init(xCache: response.cache))
    }

    /// `/stats` whole, with the figures of the server a request came in on.
    func report(server: ServerStatistics) -> StatisticsReport {
        StatisticsReport(uptimeSeconds: service.uptime / .seconds(1), service: service.statistics,
                         prefetch: prefetcher.statistics, server: server)
    }

    /// A request spelled as one seen before under this configuration skips
    /// the signature, the parsing and the normalization; a memory hit of it
    /// sends fields built once ([HitShortcuts]). Everything else takes the
    /// full path, which also fills the shortcut.
    private func thumbnail(_ request: HTTPRequest, _ responder: Responder) {
        let generation = service.configurationGeneration
        // Repeated Accept fields are one list (RFC 9110 §5.3), as negotiation reads them.
        let key = HitShortcuts.Key(target: request.target, accept: request.combinedHeader("Accept"))
        let parsed: ThumbnailRequest
        if let entry = shortcuts.entry(key, generation: generation) {
            if let r = service.cachedRendition(entry.request) {
                let fields = shortcuts.fields(key, entry, etag: r.etag, generation: generation) {
                    AnswerFields(r, cacheControl: Self.cacheControl(service.config.output),
                                 varies: entry.request.variesByAccept)
                }
                return responder.respond(fields.response(r, cache: .memory, ifNoneMatch: request.header("If-None-Match")))
            }
            parsed = entry.request
        } else {
            let config = service.config
            // The signature first: an unsigned request learns nothing, not even which parameter is wrong.
            if let key = security.withLock(\.signingKey), !URLSignature.verify(target: request.target, key: key) {
                return responder.respond(APIError.badSignature.thumbnailResponse(config.output, varies: false))
            }
            do {
                parsed = try ThumbnailRequest(query: request.query, config: config, accept: key.accept)
            } catch {
                report(error, request)
                return responder.respond(error.thumbnailResponse(config.output, varies: false))
            }
            shortcuts.remember(key, .init(request: parsed, fields: nil), generation: generation)
        }
        let ifNoneMatch = request.header("If-None-Match")
        let varies = parsed.variesByAccept
        service.thumbnail(parsed, clientGone: { responder.isCancelled }) { [self, service] result in
            let output = service.config.output
            switch result {
            case .failure(let error):
                report(error, request)
                responder.respond(error.thumbnailResponse(output, varies: varies))
            case .success(let answer):
                let fields = AnswerFields(answer.rendition, cacheControl: Self.cacheControl(output), varies: varies)
                responder.respond(fields.response(answer.rendition, cache: answer.cache, ifNoneMatch: ifNoneMatch))
            }
        }
    }

    /// `Cache-Control` of a thumbnail: `stale-while-revalidate` only when set.
    static func cacheControl(_ output: ServiceConfiguration.Output) -> String {
        let swr = output.staleWhileRevalidateSeconds
        return "public, max-age=\(output.cacheMaxAgeSeconds)" + (swr > 0 ? ", stale-while-revalidate=\(swr)" : "")
    }

    /// `POST /prefetch` (API.md § Prefetch): validated whole, queued, answered at once.
    private func prefetch(_ request: HTTPRequest, _ config: ServiceConfiguration, _ responder: Responder) {
        do throws(ServiceError) {
            let batch = try PrefetchBatch(body: request.body, config: config)
            try prefetcher.submit(batch.items)
            responder.respond(HTTPResponse.json(status: 202,
                                                JSONValue.object([("accepted", .integer(batch.items.count))]).serialized()))
        } catch {
            report(error, request)
            responder.respond(error.response)
        }
    }

    /// `DELETE /cache?url=SOURCE` (API.md § Endpoints).
    private func purge(_ request: HTTPRequest, _ responder: Responder) {
        guard request.query.count == 1, request.query[0].name == "url", !request.query[0].value.isEmpty else {
            return responder.respond(ServiceError.badRequest("DELETE /cache takes exactly one parameter, url").response)
        }
        service.purge(request.query[0].value) { removed in
            responder.respond(HTTPResponse.json(status: 200, JSONValue.object([("removed", .integer(removed))]).serialized()))
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
