import Foundation
import Synchronization
import Testing
@testable import ThumbFetch
import ThumbRender
@testable import ThumbService
import ThumbTestSupport

@Suite(.serialized) struct ServiceLimitsTests {
    /// 1000 distinct variants of one source (10 sizes × 100 qualities) through a
    /// 100 KB cache: it never holds more than its limit, and it evicts rather than refuses.
    @Test func theMemoryCacheStaysWithinItsLimitUnder1000Variants() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let s = try loopbackService("limits") { $0.memoryCacheBytes = 100_000 }
        defer { s.renders.shutdown() }
        var peak = 0
        for w in 40..<50 {
            for q in 1...100 {
                let result = answer(s, try thumbnailRequest(origin.url("/cat.jpg"), [("w", String(w)), ("q", String(q))]))
                #expect((try? result.get()) != nil)
                peak = max(peak, s.memory.statistics.bytes)
            }
        }
        let stats = s.memory.statistics
        #expect(peak <= 100_000 && stats.bytes <= stats.limitBytes && stats.evictions > 0 && stats.insertions >= 1000)
        #expect(origin.hits("/cat.jpg") == 1, "later variants decode the original from disk")
        if let dir = s.disk?.directory { try? FileManager.default.removeItem(atPath: dir) }
    }

    /// A full render queue answers 503 overloaded (counted as rejected) instead of queueing without bound.
    @Test func aFullQueueAnswers503() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let s = try loopbackService("limits") { $0.workers = 1; $0.maxQueue = 1; $0.memoryCacheBytes = 0 }
        defer { s.renders.shutdown() }
        // Warm the original so renders start at once, then flood with distinct variants.
        _ = answer(s, try thumbnailRequest(origin.url("/cat.jpg"), [("w", "9")]))
        let results = Mutex<[Result<ThumbnailResult, ServiceError>]>([])
        let group = DispatchGroup()
        for w in 10..<40 {
            group.enter()
            s.thumbnail(try thumbnailRequest(origin.url("/cat.jpg"), [("w", String(w)), ("format", "png")])) { r in
                results.withLock { $0.append(r) }
                group.leave()
            }
        }
        #expect(group.wait(timeout: .now() + 20) == .success)
        let all = results.withLock { $0 }
        let rejected = all.filter { if case .failure(.overloaded) = $0 { true } else { false } }.count
        #expect(all.count == 30 && rejected > 0 && all.count - rejected >= 1)
        #expect(s.counters.withLock { $0 }.renderRejected == rejected)
        if let dir = s.disk?.directory { try? FileManager.default.removeItem(atPath: dir) }
    }

    /// Configuration.md `limits.maxDecodeMemoryBytes`: a storm of renders whose estimates
    /// do not fit together queues instead of running at once — with two workers
    /// and room for one decode, never more than one runs and the budget holds.
    /// A gate job holds the queue until all 16 wait in it, so they contend for
    /// the idle worker; the queue's own high-water mark (`peaks`) says what ran
    /// at once. A thread polling `statistics` instead once saw nothing at all
    /// on a loaded machine: it was not scheduled while the renders ran.
    @Test func aStormOfDecodesQueuesWithinTheMemoryBudget() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let variant = PreparedVariant(width: 300, height: nil, fit: .inside, enlarge: false)
        let estimate = try ThumbnailPipeline.plan(source: TestOrigin.jpeg, variant: variant,
                                                  limits: ServiceConfiguration().pipelineLimits).estimatedMemory
        let budget = estimate * 3 / 2
        let warm = try loopbackService("limits") { $0.workers = 2; $0.memoryCacheBytes = 0; $0.limits.maxDecodeMemoryBytes = budget }
        _ = answer(warm, try thumbnailRequest(origin.url("/cat.jpg"), [("w", "10")]))   // the original onto disk
        // Its facts too, computed after the answer: the storm's renders find them and queue nothing else.
        #expect(eventually { warm.renders.statistics == .init() }, "\(warm.renders.statistics)")
        warm.renders.shutdown()
        // The storm on a service of its own over that store: its queue's peaks are the storm's alone.
        let s = ThumbnailService(configuration: warm.config, fetcher: Fetcher(policy: FetchPolicy(configuration: warm.config)),
                                 disk: warm.disk)
        defer { s.renders.shutdown() }
        // Beside the gate no decode fits (each is admitted at `estimate` or more), yet the gate alone is under `estimate`.
        let gateCost = budget - estimate + 1
        let gate = DispatchSemaphore(value: 0)
        try s.renders.submit(cost: gateCost) { gate.wait() }
        let group = DispatchGroup()
        let ok = Atomic<Int>(0)
        for q in 60..<76 {   // 16 distinct variants, all about `estimate`
            group.enter()
            s.thumbnail(try thumbnailRequest(origin.url("/cat.jpg"), [("w", "300"), ("q", String(q)), ("format", "jpeg")])) { r in
                if case .success = r { ok.add(1, ordering: .relaxed) }
                group.leave()
            }
        }
        #expect(eventually { s.renders.statistics == .init(active: 1, queued: 16, memoryInUse: gateCost) },
                "\(s.renders.statistics)")
        gate.signal()
        #expect(group.wait(timeout: .now() + 30) == .success)
        // The answers come from inside the jobs: the last may still be running, and none outlives the test.
        #expect(eventually { s.renders.statistics == .init() }, "\(s.renders.statistics)")
        let peaks = s.renders.peaks
        #expect(ok.load(ordering: .relaxed) == 16, "all queued and served, none refused")
        #expect(peaks.active == 1 && peaks.memoryInUse <= budget && peaks.memoryInUse >= estimate,
                "peak active \(peaks.active), peak memory \(peaks.memoryInUse) of budget \(budget) (one decode ≈ \(estimate))")
        if let dir = s.disk?.directory { try? FileManager.default.removeItem(atPath: dir) }
    }

    /// `jpeg` with `segments` APP2 segments of 64 KiB (not ICC) after SOI:
    /// the same pixels, an original many times larger.
    private static func padded(_ jpeg: [UInt8], segments: Int) -> [UInt8] {
        let payload = [UInt8]("PAD\0".utf8) + [UInt8](repeating: 0, count: 65_529)
        let segment = [0xFF, 0xE2, 0xFF, 0xFF] + payload   // length 0xFFFF counts itself
        return Array(jpeg[0..<2]) + Array([[UInt8]](repeating: segment, count: segments).joined()) + jpeg[2...]
    }

    /// The scaler builds its result as 16-byte float pixels before bytes: a
    /// 4096×4096 RGBA answer of a small JPEG peaks near 330 MiB (attacks.sh), so
    /// its estimate must not be the 64 MiB of the answer alone.
    @Test func theDecodeEstimateCountsTheScalersFloatResult() throws {
        let variant = PreparedVariant(width: 4096, height: 4096, fit: .fill, enlarge: true)
        let plan = try ThumbnailPipeline.plan(source: TestOrigin.jpeg, variant: variant,
                                              limits: ServiceConfiguration().pipelineLimits)
        #expect(plan.estimatedMemory >= 4096 * 4096 * (16 + 4))
        let cover = try ThumbnailPipeline.plan(source: TestOrigin.jpeg,
                                               variant: PreparedVariant(width: 4096, height: 1024, fit: .cover, enlarge: true),
                                               limits: ServiceConfiguration().pipelineLimits)
        let g = cover.geometry
        #expect(g.width * g.height < g.scaledWidth * g.scaledHeight, "cover crops")
        #expect(cover.estimatedMemory >= g.scaledWidth * g.scaledHeight * 20 + g.width * g.height * 4)
    }

    /// Configuration.md `limits.maxDecodeMemoryBytes` counts the original's
    /// bytes held while decoding: a thumbnail-sized JPEG padded to 4 MB is
    /// refused by a budget that its pixels alone would fit (issue 14).
    @Test func theDecodeEstimateCountsTheOriginalsBytes() throws {
        let variant = PreparedVariant(width: 64, height: nil, fit: .inside, enlarge: false)
        let limits = ServiceConfiguration().pipelineLimits
        let plain = try ThumbnailPipeline.plan(source: TestOrigin.jpeg, variant: variant, limits: limits).estimatedMemory
        let big = Self.padded(TestOrigin.jpeg, segments: 64)
        let padded = try ThumbnailPipeline.plan(source: big, variant: variant, limits: limits).estimatedMemory
        #expect(padded - plain == big.count - TestOrigin.jpeg.count)

        let origin = try TestOrigin(extraRoutes: ["/padded.jpg": big])
        defer { origin.stop() }
        let s = try loopbackService("limits") { $0.limits.maxDecodeMemoryBytes = plain + 1_000_000 }
        defer { s.renders.shutdown() }
        let result = answer(s, try thumbnailRequest(origin.url("/padded.jpg"), [("w", "64")]))
        guard case .failure(.imageTooLarge) = result else {
            Issue.record("expected image_too_large, got \(result)"); return
        }
        #expect(answer(s, try thumbnailRequest(origin.url("/cat.jpg"), [("w", "64")])).map(\.cache) == .success(.origin))
        if let dir = s.disk?.directory { try? FileManager.default.removeItem(atPath: dir) }
    }

    /// Downloads hold no thread (issue 11): 200 misses on distinct slow
    /// sources at once leave the thread count where it was, give or take
    /// the threads Dispatch starts for the disk look-ups: up to 16 on a
    /// loaded host (measured beside six busy processes, all overcommit
    /// workers started within 20 ms of the burst), against ~200 if each
    /// download held one.
    @Test func twoHundredSlowMissesDoNotGrowTheThreadCount() throws {
        func threads() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1 }
        let origin = try TestOrigin()
        defer { origin.stop() }
        let s = try loopbackService("limits") { $0.origin.maxConcurrentFetches = 256; $0.maxQueue = 1000 }
        defer { s.renders.shutdown() }
        _ = answer(s, try thumbnailRequest(origin.url("/cat.jpg"), [("w", "8")]))   // workers, engine and origin warmed up
        let before = threads()
        let group = DispatchGroup()
        let ok = Atomic<Int>(0)
        for n in 0..<200 {
            group.enter()
            s.thumbnail(try thumbnailRequest(origin.url("/slow.jpg?n=\(n)"), [("w", "8")])) { result in
                if case .success = result { ok.add(1, ordering: .relaxed) }
                group.leave()
            }
        }
        var peak = before
        let end = Date().addingTimeInterval(20)
        while group.wait(timeout: .now() + 0.02) == .timedOut, Date() < end { peak = max(peak, threads()) }
        #expect(ok.load(ordering: .relaxed) == 200)
        #expect(peak - before <= 40, "threads \(before) before, \(peak) at the peak")
        if let dir = s.disk?.directory { try? FileManager.default.removeItem(atPath: dir) }
    }

    /// A reload that narrows allowedHosts stops serving what is cached or
    /// stored for the hosts it drops: 403 from memory and from disk alike.
    @Test func narrowedAllowedHostsRefuseCachedAndStoredSources() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let s = try loopbackService("limits") { $0.origin.allowedHosts = ["127.0.0.1", "localhost"] }
        defer { s.renders.shutdown() }
        let cached = try thumbnailRequest(origin.url("/cat.jpg"), [("w", "20")])
        guard case .success = answer(s, cached) else { Issue.record("first answer failed"); return }
        #expect(answer(s, cached).map(\.cache) == .success(.memory))
        var narrowed = s.config
        narrowed.origin.allowedHosts = ["localhost"]
        s.reload(narrowed)
        guard case .failure(.forbiddenSource(let message)) = answer(s, cached) else {
            Issue.record("a cached variant of a refused host was served"); return
        }
        #expect(message.contains("127.0.0.1"), "names the host: \(message)")
        // A variant never rendered, whose original is on disk: refused too, origin untouched.
        guard case .failure(.forbiddenSource) = answer(s, try thumbnailRequest(origin.url("/cat.jpg"), [("w", "21")])) else {
            Issue.record("a stored original of a refused host was served"); return
        }
        #expect(origin.hits("/cat.jpg") == 1)
        // Widening again serves from memory.
        var widened = s.config
        widened.origin.allowedHosts = []
        s.reload(widened)
        #expect(answer(s, cached).map(\.cache) == .success(.memory))
        if let dir = s.disk?.directory { try? FileManager.default.removeItem(atPath: dir) }
    }

    /// SourcesAndLimits.md "Re-checked on hits": the address an original
    /// came from is kept with it; after a reload, or a restart on the same
    /// store, that disallows private networks, neither its cached variants nor
    /// its stored original are served, and the origin is not asked.
    @Test func disallowingPrivateNetworksRefusesWhatWasFetchedFromThem() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let s = try loopbackService("limits") { _ in }   // allowPrivateNetworks: the origin is on 127.0.0.1
        defer { s.renders.shutdown() }
        let cached = try thumbnailRequest(origin.url("/cat.jpg"), [("w", "20")])
        guard case .success = answer(s, cached) else { Issue.record("first answer failed"); return }
        #expect(s.disk?.load(url: cached.sourceURL)?.metadata.address == "127.0.0.1")
        var strict = s.config
        strict.origin.allowPrivateNetworks = false
        s.reload(strict)
        for r in [cached, try thumbnailRequest(origin.url("/cat.jpg"), [("w", "21")])] {
            guard case .failure(.forbiddenSource(let message)) = answer(s, r) else {
                Issue.record("served after private networks were disallowed"); return
            }
            #expect(message.contains("127.0.0.1") && message.contains("loopback"), "\(message)")
        }
        #expect(origin.hits("/cat.jpg") == 1)

        // A restart on the same store under the strict rules: still refused, origin untouched.
        let restarted = ThumbnailService(configuration: strict, fetcher: Fetcher(policy: FetchPolicy(configuration: strict)),
                                         disk: s.disk)
        defer { restarted.renders.shutdown() }
        guard case .failure(.forbiddenSource) = answer(restarted, cached) else {
            Issue.record("a stored original fetched from loopback was served after a restart"); return
        }
        #expect(origin.hits("/cat.jpg") == 1)
        if let dir = s.disk?.directory { try? FileManager.default.removeItem(atPath: dir) }
    }

    /// The disk TTL reads the wall clock (it must survive restarts): a clock
    /// stepped back to before an original was fetched has that original
    /// revalidated (a conditional request, 304), not trusted for the size of
    /// the step; forwards within the TTL it is served untouched.
    @Test func aClockSteppedBackwardsRevalidatesInsteadOfTrusting() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let wall = ManualWallClock(secondsSince1970: 1_000_000)
        var c = ServiceConfiguration()
        c.origin.allowPrivateNetworks = true
        c.memoryCacheBytes = 0
        let store = NSTemporaryDirectory() + "thumbd-clock-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: store) }
        let s = ThumbnailService(configuration: c, fetcher: Fetcher(policy: FetchPolicy(configuration: c)),
                                 disk: try DiskStore(directory: store, maxBytes: 10 << 20), wallClock: wall)
        defer { s.renders.shutdown() }
        #expect(answer(s, try thumbnailRequest(origin.url("/cat.jpg"), [("w", "20")])).map(\.cache) == .success(.origin))
        wall.advance(by: .seconds(60))
        #expect(answer(s, try thumbnailRequest(origin.url("/cat.jpg"), [("w", "21")])).map(\.cache) == .success(.disk))
        #expect(origin.hits("/cat.jpg") == 1 && s.disk?.statistics.revalidations == 0)
        wall.advance(by: .seconds(-3600))   // an hour before the fetch
        #expect(answer(s, try thumbnailRequest(origin.url("/cat.jpg"), [("w", "22")])).map(\.cache) == .success(.disk))
        #expect(origin.hits("/cat.jpg") == 2 && s.disk?.statistics.revalidations == 1)
    }

    /// SIGHUP's service half (ServiceLife.md): new cache sizes evict at once, new
    /// origin rules reach the fetcher.
    @Test func reloadAppliesCacheSizesOriginRulesAndQueueLimits() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let s = try loopbackService("limits") { $0.memoryCacheBytes = 1 << 20 }
        defer { s.renders.shutdown() }
        for w in 20..<30 { _ = answer(s, try thumbnailRequest(origin.url("/cat.jpg"), [("w", String(w))])) }
        let before = s.memory.statistics
        #expect(before.entries >= 10 && before.bytes > 20_000)
        var smaller = s.config
        smaller.memoryCacheBytes = 20_000
        smaller.diskStore.maxBytes = 1 << 19
        s.reload(smaller)
        let after = s.memory.statistics
        #expect(after.limitBytes == 20_000 && after.bytes <= 20_000 && after.evictions > before.evictions)
        #expect(s.disk?.statistics.limitBytes == 1 << 19)
        smaller.origin.allowPrivateNetworks = false
        s.reload(smaller)
        // A source not yet on disk now goes through the new rules: loopback is refused.
        let refused = answer(s, try thumbnailRequest(origin.url("/slowish.jpg"), [("w", "20")]))
        guard case .failure(.forbiddenSource) = refused else { Issue.record("expected 403, got \(refused)"); return }
        #expect(origin.hits("/slowish.jpg") == 0)
        if let dir = s.disk?.directory { try? FileManager.default.removeItem(atPath: dir) }
    }
}
