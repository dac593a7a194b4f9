import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import ThumbClock
import ThumbCodec
import ThumbFetch
import ThumbImaging
import ThumbRender

/// Serves thumbnails: memory cache, then one shared render per variant, then
/// one shared download per source (API.md § Endpoints, API.md § GET /thumbnail, Statistics.md, SourcesAndLimits.md). Knows nothing of
/// sockets; the HTTP handler adapts it.
///
/// Threads: `thumbnail(_:completion:)` is called on a socket thread and only
/// does cache lookups there. Originals load from disk on the fetch queue;
/// downloads run on the fetcher's own engine, without a thread each, and
/// stream to a file; reading the original, the header probe, decoding,
/// scaling and encoding run on the render queue's workers
/// (`ThumbnailService+Rendering.swift`). `completion` is
/// called exactly once, from any thread — unless the request's client has
/// gone and its render is abandoned (Statistics.md `render.abandoned`):
/// then never, since nobody is listening.
public final class ThumbnailService: Sendable {
    private let configuration: Mutex<ServiceConfiguration>
    private let generation = Atomic<Int>(0)
    let memory: MemoryCache<MemoryKey, MemoryItem>
    let disk: DiskStore?
    /// The fleet's shared originals store; nil when there is no way to reach one.
    let shared: SharedStore?
    public let renders: RenderQueue
    let counters = SharedCounters()
    let negative: NegativeCache
    let loader: OriginLoader
    let renderFlights = RenderFlights<ThumbnailRequest, ThumbnailResult>()
    private let originFlights = Coalescer<String, Original>()
    /// `/info` look-ups by source URL: a batch naming one source 100 times,
    /// or many clients asking at once, compute its facts once.
    let infoFlights = Coalescer<String, InfoResult>()
    /// Facts being computed, by source URL: whichever of `/info` and a first
    /// render starts first computes them, and an `/info` arriving meanwhile
    /// waits for that computation instead of making its own.
    let factsFlights = Coalescer<String, OriginalFacts>()
    /// The waiting prefetch-priority job of a first render's deferred facts,
    /// by source URL, so an `/info` that joins them can promote it.
    let backgroundFacts = Mutex<[String: Int]>([:])
    /// The queued first job of each facts computation, by source URL, while it waits: a render of
    /// the source that computes the facts anyway withdraws it and serves both (`withdrawQueuedFacts`).
    let queuedFacts = Mutex<[String: Int]>([:])
    /// Sources (by hash; a collision only moves a facts job forward) a render started for while
    /// no facts job of theirs waited: the job submitted next goes forward (issue 38). At most
    /// `onScreenMarks`, all dropped when full; taken under `queuedFacts`' lock.
    let onScreen = Mutex<Set<Int>>([])
    static let onScreenMarks = 1024
    /// Disk store look-ups and renames of downloaded originals; downloads
    /// themselves hold no thread here, and nothing is decoded or probed here.
    private let fetchQueue: DispatchQueue
    /// Where probes, decodes and encodes run: worker processes in the daemon
    /// (Isolation.md), this process for the CLI and the pipeline's tests.
    public let engine: any RenderEngine
    /// The one clock every deadline and age in the service is counted on.
    let clock: AnyClock
    /// When the service was made, on `clock`: the daemon's uptime (`/stats`).
    private let started: AnyClock.Instant

    /// `clock` ages renders and remembered failures; `wallClock` dates
    /// fetched originals (their age must survive a restart).
    ///
    /// `objects` reaches the shared originals store (SeveralInstances.md); by
    /// default the fetcher itself, when it can (the real `Fetcher` does).
    /// `scratch`: where downloads the disk store cannot take go (tests; by
    /// default the system's temporary directory).
    public init<C: Clock>(configuration: ServiceConfiguration, fetcher: any OriginFetching, disk: DiskStore?,
                          clock: C = ContinuousClock(), wallClock: any WallClock = SystemWallClock(),
                          engine: any RenderEngine = InProcessEngine(), objects: (any ObjectStoring)? = nil,
                          scratch: String = NSTemporaryDirectory())
    where C.Duration == Duration {
        self.configuration = Mutex(configuration)
        self.engine = engine
        let anyClock = AnyClock(clock)
        self.clock = anyClock
        started = anyClock.now
        memory = MemoryCache(limitBytes: configuration.memoryCacheBytes)
        self.disk = disk
        // glibc keeps the heap a storm of renders freed (Testing.md § Attacks and storms,
        // storm.sh: 159 MiB held 10 s after, 58 MiB once trimmed); trimming when the queue has
        // been idle for a second costs the busy path nothing, unlike a low mmap threshold.
        renders = RenderQueue(workers: configuration.workers, maxQueue: configuration.maxQueue,
                              memoryBudget: configuration.limits.maxDecodeMemoryBytes,
                              reservedPerWorker: engine.workerBaseBytes, clock: clock,
                              whenIdle: FreedHeap.release)
        negative = NegativeCache(ttl: .seconds(configuration.origin.negativeCacheSeconds), clock: clock)
        let fetchQueue = DispatchQueue(label: "thumbd.fetch", attributes: .concurrent)
        self.fetchQueue = fetchQueue
        shared = (objects ?? fetcher as? any ObjectStoring).map {
            SharedStore(objects: $0, configuration: configuration, io: fetchQueue, clock: anyClock)
        }
        loader = OriginLoader(fetcher: fetcher, disk: disk, shared: shared, counters: counters, wallClock: wallClock,
                              io: fetchQueue, scratch: scratch, renders: renders)
    }

    public var config: ServiceConfiguration { configuration.withLock { $0 } }

    /// Time since the service was made, on its clock.
    public var uptime: Duration { started.duration(to: clock.now) }

    /// Applies a re-read configuration (SIGHUP, ServiceLife.md): limits, allowlists,
    /// presets, keys and cache sizes from now on; shrinking a cache evicts at
    /// once. `workers` and `listen` need a restart.
    public func reload(_ new: ServiceConfiguration) {
        let old = configuration.withLock { old in
            defer { old = new }
            return old
        }
        generation.add(1, ordering: .releasing)
        // Variants in memory do not know the address their original came
        // from; when private networks become refused, they go (the originals
        // on disk do know it, and are checked as they load).
        if old.origin.allowPrivateNetworks && !new.origin.allowPrivateNetworks {
            _ = memory.removeAll { _ in true }
        }
        // Likewise for s3 sources when the store moves or a bucket is no longer
        // allowed: what is in memory goes, and the originals on disk are
        // checked against the new rules as they load.
        if old.s3.endpoint != new.s3.endpoint || !Set(old.s3.allowedBuckets).isSubset(of: new.s3.allowedBuckets) {
            _ = memory.removeAll { $0.url.utf8.starts(with: "s3://".utf8) }
        }
        // A rotated key (or another store, region, style) may answer what failed: ask again.
        if old.s3 != new.s3 { _ = negative.forgetAll(startingWith: "s3://") }
        memory.setLimit(new.memoryCacheBytes)
        disk?.setLimit(new.diskStore.maxBytes)
        renders.update(maxQueue: new.maxQueue, memoryBudget: new.limits.maxDecodeMemoryBytes)
        negative.setTTL(.seconds(new.origin.negativeCacheSeconds))
        loader.fetcher.update(configuration: new)
        shared?.update(new)
    }

    /// The host rule holds for what is already cached too: a reload that
    /// narrows allowedHosts stops serving those sources at once.
    private func hostRefusal(_ request: ThumbnailRequest) -> ServiceError? {
        hostRefusal(host: request.sourceHost)
    }

    /// `host` is only worked out when there is an allowlist: finding a
    /// normalized URL's host cost a memory hit 20 % of its rate. An `s3`
    /// source has none (nil): its bucket rules hold through `reload`.
    func hostRefusal(host: @autoclosure () -> String?) -> ServiceError? {
        let allowed = configuration.withLock { $0.origin.allowedHosts }
        guard !allowed.isEmpty, let host = host() else { return nil }
        guard !HostPattern.allows(host, patterns: allowed) else { return nil }
        return .forbiddenSource("host \(host) is not in origin.allowedHosts")
    }

    /// Bumped by every reload: what a caller derives from the configuration
    /// (a request's validation, a response's prepared fields) holds for one
    /// generation.
    public var configurationGeneration: Int { generation.load(ordering: .acquiring) }

    /// The hot path of a live memory hit, counted as `thumbnail(_:completion:)`
    /// counts one: the rendition when it is in memory and its host still
    /// allowed; nil otherwise, and `thumbnail(_:completion:)` then gives the
    /// answer (a render, or the refusal).
    public func cachedRendition(_ request: ThumbnailRequest) -> Rendition? {
        let request = request.asksAutoQuality ? resolvingAutoQuality(request) : request
        guard hostRefusal(request) == nil, let r = memoryRendition(request) else { return nil }
        counters.countMemoryHit()
        return r
    }

    /// Answers one validated request. `clientGone` (live requests only) turns
    /// true once the client has left: a render whose every waiter's client
    /// has left is skipped before it decodes, and `completion` is then not
    /// called. A prefetch item, or a request without `clientGone`, keeps its
    /// render alive.
    public func thumbnail(_ request: ThumbnailRequest, priority: RenderQueue.Priority = .live,
                          clientGone: (@Sendable () -> Bool)? = nil,
                          completion: @escaping @Sendable (Result<ThumbnailResult, ServiceError>) -> Void) {
        // `q=auto` with a known result is an ordinary look-up of that q; unresolved, its requests
        // coalesce on the unresolved variant, whose render searches.
        let request = request.asksAutoQuality ? resolvingAutoQuality(request) : request
        let url = request.sourceURL
        if let refused = hostRefusal(request) { return completion(.failure(refused)) }
        // Statistics.md: memory hits and misses count /thumbnail requests; prefetch items are not.
        let live = priority == .live
        if let r = memoryRendition(request) {
            if live { counters.countMemoryHit() }
            completion(.success(ThumbnailResult(rendition: r, cache: .memory)))
            return
        }
        let counted: @Sendable (Result<ThumbnailResult, ServiceError>) -> Void = { [counters] result in
            if live, case .failure(.overloaded) = result { counters.withLock { $0.renderRejected += 1 } }
            completion(result)
        }
        guard renderFlights.join(request, priority: priority, clientGone: live ? clientGone : nil,
                                 promote: renders.promote, counted) else {
            if live {
                counters.withLock {
                    $0.memoryMisses += 1
                    $0.renderCoalesced += 1
                }
            }
            return
        }
        if case .prepared(let bitmap, let sha, let fromAnimation)? = memory.get(.prepared(url: url, request.variant.prepared)),
           !(fromAnimation && (request.variant.animates || request.animationVariant != nil)),
           !request.asksAutoQuality {   // the search needs the original
            if live { counters.countMemoryHit() }
            submitRender(request, cost: bitmap.byteCount) { _ throws(ServiceError) in
                .done(try self.encode(request, bitmap: bitmap, sha256: sha, fromAnimatedSource: fromAnimation), .memory)
            }
            return
        }
        if live { counters.withLock { $0.memoryMisses += 1 } }
        if let failure = negative.lookup(url) {
            endFlight(request, .failure(failure))
            return
        }
        withOriginal(request.source, live: live) { [self] result in
            switch result {
            case .failure(let error): endFlight(request, .failure(error))
            case .success(let original): render(request, from: original)
            }
        }
    }

    /// Hands `url`'s original to `body` (on the fetch queue, the caller's
    /// thread, or the render worker that checked facts from the shared store):
    /// the one download or disk look-up every route shares, joined when one is
    /// in flight (counted in `origin.coalesced` when `live`).
    ///
    /// `desertion`: a `POST /info` item's, whose batch may answer before the
    /// original arrives; once every waiter of the download is deserted it
    /// stops, or never starts (API.md § /info), and each waiter's `abandoned`
    /// runs instead of `body`. nil keeps the download alive.
    func withOriginal(_ source: OriginalSource, live: Bool, desertion: Coalescer<String, Original>.Desertion? = nil,
                      _ body: @escaping @Sendable (Result<Original, ServiceError>) -> Void) {
        let url = source.url
        guard originFlights.join(url, desertion: desertion, body) else {
            if live { counters.withLock { $0.originCoalesced += 1 } }
            return
        }
        loadOriginal(source, watched: desertion != nil)
    }

    /// The work of the download flight of `url`, which the caller has opened.
    /// `watched`: its first waiter may be deserted, so the download engine
    /// asks whether anyone still waits (a flight a `/thumbnail` started never
    /// is: its waiter keeps it alive, and its download pays no asking).
    private func loadOriginal(_ source: OriginalSource, watched: Bool) {
        let url = source.url
        let current = config
        let ttl = Double(current.diskStore.ttlSeconds)
        let policy = FetchPolicy(configuration: current)
        let unwanted = UnwantedDownload()
        let asked: @Sendable () -> Bool = { [originFlights] in
            guard originFlights.isDeserted(url) else { return true }
            unwanted.said.store(true, ordering: .relaxed)
            return false
        }
        let wanted = watched ? asked : nil
        fetchQueue.async { [self] in
            // Deserted while it waited for this queue: nothing to look up.
            if watched, originFlights.abandonIfDeserted(url) { return }
            loader.load(source, ttl: ttl, policy: policy, wanted: wanted, onChanged: { [memory] changed in
                _ = memory.removeAll { $0.url == changed }
            }) { [self] result in
                if case .failure = result, unwanted.said.load(ordering: .relaxed) {
                    // Stopped for nobody: not remembered. Ended, or started over for a waiter that joined since.
                    if !originFlights.abandonIfDeserted(url) { loadOriginal(source, watched: true) }
                    return
                }
                if case .failure(let error) = result { negative.remember(url, error) }
                guard case .success(let original) = result, let facts = original.sharedFacts else {
                    return originFlights.complete(url, with: result)
                }
                checkSharedFacts(facts, url: url, original) { [self] in originFlights.complete(url, with: result) }
            }
        }
    }

    /// Render and download flights in progress, for leak checks in tests.
    var flightsInProgress: (renders: Int, downloads: Int, info: Int, facts: Int) {
        (renderFlights.inFlight, originFlights.inFlight, infoFlights.inFlight, factsFlights.inFlight)
    }

    /// Every figure the service keeps for `/stats` (Statistics.md), read now.
    public var statistics: ServiceStatistics {
        let c = config
        return ServiceStatistics(memory: memory.statistics,
                                 disk: disk?.statistics ?? DiskStore.Statistics(limitBytes: c.diskStore.maxBytes),
                                 counters: counters.snapshot, render: renders.statistics, engine: engine.counts,
                                 shared: shared?.statistics ?? SharedStore.Statistics())
    }

    /// Forgets a source (API.md § Endpoints `DELETE /cache`): its original on disk, every
    /// prepared variant in memory and a remembered failure. Returns how many.
    public func purge(_ spelling: String) -> Int {
        let url = URLNormalization.normalize(spelling) ?? spelling
        var removed = memory.removeAll { $0.url == url }
        if disk?.remove(url: url) == true { removed += 1 }
        if negative.forget(url) { removed += 1 }
        return removed
    }

    /// `purge`, and the shared store's copy too (SeveralInstances.md), counted
    /// in `removed` when there was one. `completion` runs once, on any thread,
    /// after the shared copy is gone (or its deletion failed, which is logged).
    public func purge(_ spelling: String, completion: @escaping @Sendable (Int) -> Void) {
        let removed = purge(spelling)
        guard let shared, shared.isEnabled else { return completion(removed) }
        shared.remove(URLNormalization.normalize(spelling) ?? spelling) { existed in
            completion(removed + (existed ? 1 : 0))
        }
    }
}

/// Whether the download engine was told nobody waits for a download: its
/// failure is then an abandonment, not the origin's.
private final class UnwantedDownload: Sendable {
    let said = Atomic<Bool>(false)
}

extension ServiceConfiguration {
    var pipelineLimits: PipelineLimits {
        PipelineLimits(maxSourcePixels: limits.maxSourcePixels, maxOutputDimension: limits.maxOutputDimension,
                       maxAnimationFrames: limits.maxAnimationFrames, maxAnimationPixels: limits.maxAnimationPixels,
                       jpegXLSources: limits.jpegXLSources)
    }
}
