import CThumbCurl
import Dispatch
import Synchronization

/// Downloads originals on libcurl under the SSRF rules of SourcesAndLimits.md: the host
/// allowlist and scheme on the first URL and on every redirect (followed
/// here, not by libcurl), the address classes on every connection libcurl
/// opens, checked on the address it is about to connect to (so a DNS answer
/// that changes after any earlier look-up cannot get through), and again
/// before each request on a reused connection.
///
/// All downloads of a fetcher run on one thread (libcurl's multi interface),
/// at most `maxConcurrentFetches` at once, the rest waiting in arrival order;
/// connections, TLS sessions and DNS answers are reused across downloads.
/// The shared originals store's requests run on a second engine of their own.
public final class Fetcher: Sendable {
    private let currentPolicy: Mutex<FetchPolicy>
    let engine: CurlEngine
    /// The shared originals store's requests (look-ups, copies, writes;
    /// SeveralInstances.md) run on an engine of their own, started on first
    /// use: a slow or stalled store never holds a slot of
    /// `maxConcurrentFetches` nor the thread origin downloads run on.
    private let storeEngine = Mutex<CurlEngine?>(nil)
    /// Store requests at once: the shared store's background writes take at
    /// most 4 (`WriteQueue.maxRunning`), look-ups the rest; more wait, each
    /// within its own deadline (`s3.timeoutSeconds`).
    static let storeSlots = 16
    private let classify: @Sendable (IPAddress) -> AddressClass
    let resolve: (@Sendable (_ host: String, _ port: UInt16) -> [String])?

    public convenience init(policy: FetchPolicy) {
        self.init(policy: policy, classify: AddressClassifier.classify, resolve: nil)
    }

    /// `classify` and `resolve` (addresses libcurl takes as the DNS answer
    /// for a host) let tests stage public and private addresses on loopback.
    init(policy: FetchPolicy, classify: @escaping @Sendable (IPAddress) -> AddressClass,
         resolve: (@Sendable (_ host: String, _ port: UInt16) -> [String])?) {
        currentPolicy = Mutex(policy)
        engine = CurlEngine(limit: policy.maxConcurrentFetches)
        self.classify = classify
        self.resolve = resolve
    }

    /// New rules after a reload; fetches already running keep theirs.
    public func update(policy: FetchPolicy) {
        currentPolicy.withLock { $0 = policy }
        engine.setLimit(policy.maxConcurrentFetches)
    }

    /// The store's engine, started on first use.
    var objectEngine: CurlEngine {
        storeEngine.withLock { engine in
            if let engine { return engine }
            let started = CurlEngine(limit: Self.storeSlots)
            engine = started
            return started
        }
    }

    /// The store's transfers running now, waiting for a slot, and the most ever running at once.
    public var storeTransferCounts: (running: Int, queued: Int, peak: Int) {
        storeEngine.withLock { $0?.counts ?? (0, 0, 0) }
    }

    /// The rules in force now.
    var policy: FetchPolicy { currentPolicy.withLock { $0 } }

    /// Transfers running now, waiting for a slot, and the most ever running at once.
    public var transferCounts: (running: Int, queued: Int, peak: Int) { engine.counts }

    /// Blocking: waits on a semaphore while the engine's thread does the
    /// work. Never call it from a `fetch(_:conditional:into:completion:)` completion.
    public func fetch(_ text: String, conditional: Conditional?, into sink: any BodySink) throws(FetchError) -> FetchResult {
        try awaitCompletion { fetch(text, conditional: conditional, into: sink, completion: $0) }
    }

    /// Without a thread per download: the body streams into `sink` as it
    /// arrives (on the engine's thread); `completion` runs once, after the
    /// last write, on the engine's thread (keep it short, never block there),
    /// or on the caller's thread when the URL is refused before any transfer.
    /// After a failure the sink may hold part of a body: the caller discards it.
    ///
    /// `wanted` is asked before the transfer starts and as it runs; once it
    /// says false the transfer ends (or never starts) with an `origin` error.
    public func fetch(_ text: String, conditional: Conditional?, into sink: any BodySink,
                      wanted: (@Sendable () -> Bool)? = nil,
                      completion: @escaping @Sendable (Result<FetchResult, FetchError>) -> Void) {
        let source: OriginalSource
        do throws(FetchError) { source = try OriginalSource(text) } catch { return completion(.failure(error)) }
        fetch(source, conditional: conditional, into: sink, wanted: wanted, completion: completion)
    }

    /// `fetch` of a source the request already parsed.
    public func fetch(_ source: OriginalSource, conditional: Conditional?, into sink: any BodySink,
                      wanted: (@Sendable () -> Bool)? = nil,
                      completion: @escaping @Sendable (Result<FetchResult, FetchError>) -> Void) {
        // One policy for the whole fetch, redirects included, even if a reload lands meanwhile.
        let policy = currentPolicy.withLock { $0 }
        let deadline = thumbd_monotonic_ms() + Int64(policy.totalTimeout * 1000)
        switch source.location {
        case .object(let location):
            fetchObject(location, policy: policy, conditional: conditional, sink: sink, deadline: deadline,
                        wanted: wanted, completion: completion)
        case .web(let url):
            hop(url, policy: policy, conditional: conditional, sink: sink, deadline: deadline, redirects: 0,
                wanted: wanted, completion: completion)
        }
    }

    static let baseHeaders = [("Accept", "image/*"), ("User-Agent", "thumbd/0.1")]

    /// A revalidation's `If-None-Match` and `If-Modified-Since`.
    static func append(_ conditional: Conditional?, to headers: inout [(String, String)]) {
        guard let conditional else { return }
        // Validators come from an origin's earlier answer: never let one split the request.
        func clean(_ v: String?) -> String? { v.flatMap { $0.contains(where: { $0 == "\r" || $0 == "\n" }) ? nil : $0 } }
        if let etag = clean(conditional.etag) { headers.append(("If-None-Match", etag)) }
        if let lm = clean(conditional.lastModified) { headers.append(("If-Modified-Since", lm)) }
    }

    /// Every hop gets the sink; only the final (2xx) answer's body reaches it.
    private func hop(_ url: SourceURL, policy: FetchPolicy, conditional: Conditional?, sink: any BodySink,
                     deadline: Int64, redirects: Int, wanted: (@Sendable () -> Bool)?,
                     completion: @escaping @Sendable (Result<FetchResult, FetchError>) -> Void) {
        do throws(FetchError) { try policy.checkHost(url) } catch { return completion(.failure(error)) }
        let classify = self.classify
        var headers = Self.baseHeaders
        if redirects == 0 { Self.append(conditional, to: &headers) }
        var request = OriginRequest(
            url: url, headers: headers, connectTimeout: policy.connectTimeout, deadline: deadline,
            maxBytes: policy.maxBytes, caFile: policy.caFile, urgent: redirects > 0,
            classify: { policy.refusal(of: $0, classify: classify) },
            resolve: resolve.map { answer in answer(url.host, url.port).map { "\(url.host):\(url.port):\($0)" } } ?? [])
        request.wanted = wanted
        engine.submit(request, sink: sink) { [self] outcome in
            let response: OriginResponse
            switch outcome {
            case .failure(let error): return completion(.failure(error))
            case .success(let r): response = r
            }
            switch response.status {
            case 200..<300:
                completion(.success(.fetched(length: response.bodyLength, etag: response.headers["etag"],
                                             lastModified: response.headers["last-modified"], finalURL: url.absolute,
                                             address: response.address)))
            case 304 where conditional != nil && redirects == 0:
                completion(.success(.notModified(etag: response.headers["etag"],
                                                 lastModified: response.headers["last-modified"])))
            case 301, 302, 303, 307, 308:
                guard let location = response.headers["location"] else {
                    return completion(.failure(.origin("redirect without Location")))
                }
                guard redirects + 1 <= policy.maxRedirects else {
                    return completion(.failure(.origin("too many redirects (over \(policy.maxRedirects))")))
                }
                let next: SourceURL
                do throws(FetchError) { next = try url.resolve(location) } catch { return completion(.failure(error)) }
                hop(next, policy: policy, conditional: conditional, sink: sink, deadline: deadline,
                    redirects: redirects + 1, wanted: wanted, completion: completion)
            case 404, 410:
                completion(.failure(.notFound))
            default:
                completion(.failure(.origin("origin answered \(response.status)")))
            }
        }
    }
}
