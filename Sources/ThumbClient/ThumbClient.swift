import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Talks to thumbd (API.md): thumbnails revalidated by ETag, `/info` for many
/// sources batched and shared, `POST /prefetch` for backends. One per
/// deployment; share it. A cancelled task cancels its request.
public actor ThumbClient {
    public struct Configuration: Sendable {
        /// thumbd's root, e.g. `https://thumbs.example`.
        public var baseURL: URL
        /// What the deployment serves (its `allowedSizes`, presets, or the app's widths).
        public var ladder: SizeLadder
        /// `security.signingKey`: on a backend only.
        public var signingKey: String?
        /// `security.adminToken`, for `prefetch` (a backend's).
        public var adminToken: String?
        /// The deployment's `info.maxBatchItems`.
        public var maxBatchItems: Int
        /// `POST /info` batches in flight at once, per client.
        public var maxConcurrentBatches: Int
        /// Thumbnails kept for revalidation (their bytes and ETag), most recent first.
        public var rememberedThumbnails: Int

        public init(baseURL: URL, ladder: SizeLadder = .any, signingKey: String? = nil, adminToken: String? = nil,
                    maxBatchItems: Int = 100, maxConcurrentBatches: Int = 4, rememberedThumbnails: Int = 256) {
            self.baseURL = baseURL
            self.ladder = ladder
            self.signingKey = signingKey
            self.adminToken = adminToken
            self.maxBatchItems = max(1, maxBatchItems)
            self.maxConcurrentBatches = max(1, maxConcurrentBatches)
            self.rememberedThumbnails = max(0, rememberedThumbnails)
        }
    }

    public nonisolated let configuration: Configuration
    public nonisolated let builder: ThumbURLBuilder
    let session: URLSession
    /// Thumbnails by URL for `If-None-Match`, with their order of use.
    var remembered: [String: Thumbnail] = [:]
    var rememberedOrder: [String] = []
    /// `/info` look-ups in flight, by source as given: a second caller joins.
    var lookups: [String: InfoBatch] = [:]
    var batchesRunning = 0
    var batchSlotWaiters: [CheckedContinuation<Void, Never>] = []
    /// Requests sent, for tests and diagnostics: `POST /info` batches and thumbnails.
    public internal(set) var infoBatchesSent = 0
    public internal(set) var peakBatchesInFlight = 0

    public init(configuration: Configuration, session: URLSession? = nil) {
        self.configuration = configuration
        builder = ThumbURLBuilder(baseURL: configuration.baseURL, ladder: configuration.ladder,
                                  signingKey: configuration.signingKey)
        self.session = session ?? {
            // thumbd's own ETags do the revalidating; a second cache would answer from under them.
            let c = URLSessionConfiguration.ephemeral
            c.urlCache = nil
            c.requestCachePolicy = .reloadIgnoringLocalCacheData
            return URLSession(configuration: c)
        }()
    }

    /// A session ends with its client: Linux's URLSession keeps its curl handles until invalidated.
    deinit { session.invalidateAndCancel() }

    /// The thumbnail of `spec`. When it was fetched before, `If-None-Match`
    /// asks thumbd whether it changed; a `304` gives back the bytes kept.
    public func thumbnail(_ spec: ThumbnailSpec) async throws(ThumbClientError) -> Thumbnail {
        let url = try builder.thumbnailURL(spec)
        let key = url.absoluteString
        var request = URLRequest(url: url)
        let previous = remembered[key]
        if let etag = previous?.etag { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        let (data, response) = try await send(request)
        if response.statusCode == 304, let previous {
            let again = Thumbnail(bytes: previous.bytes, contentType: previous.contentType, etag: previous.etag,
                                  width: previous.width, height: previous.height,
                                  serverCache: response.value(forHTTPHeaderField: "X-Cache"), revalidated: true)
            remember(again, for: key)
            return again
        }
        guard response.statusCode == 200 else { throw ThumbClientError.from(status: response.statusCode, body: data) }
        let thumbnail = Thumbnail(bytes: data, contentType: response.value(forHTTPHeaderField: "Content-Type") ?? "",
                                  etag: response.value(forHTTPHeaderField: "ETag"),
                                  width: response.value(forHTTPHeaderField: "X-Image-Width").flatMap { Int($0) },
                                  height: response.value(forHTTPHeaderField: "X-Image-Height").flatMap { Int($0) },
                                  serverCache: response.value(forHTTPHeaderField: "X-Cache"), revalidated: false)
        remember(thumbnail, for: key)
        return thumbnail
    }

    /// Warms thumbd's caches (`POST /prefetch`, an admin endpoint: a backend's
    /// call, with `adminToken`). Returns how many items thumbd accepted.
    public func prefetch(_ specs: [ThumbnailSpec]) async throws(ThumbClientError) -> Int {
        var items: [[String: Any]] = []
        for spec in specs {
            let r = try builder.resolve(spec)
            var item: [String: Any] = ["url": try ThumbURLBuilder.checkedSource(spec.source)]
            if let preset = r.preset { item["preset"] = preset } else {
                if let w = r.width { item["w"] = w }
                if let h = r.height { item["h"] = h }
                if spec.fit != .inside { item["fit"] = spec.fit.rawValue }
            }
            if let dpr = r.dpr { item["dpr"] = dpr }
            if spec.format != .auto { item["format"] = spec.format.rawValue }
            if let q = spec.quality {
                switch q {
                case .value(let n): item["q"] = n
                case .auto: item["q"] = "auto"
                }
            }
            if let g = spec.gravity { item["gravity"] = g.rawValue }
            if spec.enlarge { item["enlarge"] = true }
            items.append(item)
        }
        var request = try postRequest("/prefetch", ["items": items])
        if let token = configuration.adminToken { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await send(request)
        guard response.statusCode == 202 else { throw ThumbClientError.from(status: response.statusCode, body: data) }
        struct Accepted: Decodable { let accepted: Int }
        guard let accepted = try? JSONDecoder().decode(Accepted.self, from: data) else {
            throw .malformedAnswer("prefetch answer: \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
        return accepted.accepted
    }

    // MARK: plumbing

    func send(_ request: URLRequest) async throws(ThumbClientError) -> (Data, HTTPURLResponse) {
        if Task.isCancelled { throw .cancelled }
        do {
            let (data, response) = try await session.data(for: request)
            guard let http = response as? HTTPURLResponse else { throw ThumbClientError.malformedAnswer("not HTTP") }
            return (data, http)
        } catch {
            throw ThumbClientError.wrap(error)
        }
    }

    func postRequest(_ target: String, _ body: Any) throws(ThumbClientError) -> URLRequest {
        var request = URLRequest(url: try builder.url(target))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        do {
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
        } catch {
            throw .invalidRequest("body: \(error)")
        }
        return request
    }

    private func remember(_ thumbnail: Thumbnail, for key: String) {
        guard configuration.rememberedThumbnails > 0, thumbnail.etag != nil else { return }
        if remembered.updateValue(thumbnail, forKey: key) != nil { rememberedOrder.removeAll { $0 == key } }
        rememberedOrder.append(key)
        while rememberedOrder.count > configuration.rememberedThumbnails {
            remembered[rememberedOrder.removeFirst()] = nil
        }
    }
}
