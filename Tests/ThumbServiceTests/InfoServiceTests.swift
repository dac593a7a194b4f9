import Foundation
import Synchronization
import Testing
import ThumbFetch
import ThumbRender
@testable import ThumbService
import ThumbTestSupport

/// An origin seam whose bytes a test replaces: it answers 304 to the ETag of
/// what it serves now, and new bytes otherwise.
private final class ChangingOrigin: OriginFetching {
    let body: Mutex<[UInt8]>
    let fetches = Mutex(0)

    init(_ body: [UInt8]) { self.body = Mutex(body) }

    static func fixture(_ name: String) -> [UInt8] {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../ThumbCodecTests/Fixtures/photos/\(name)").standardized.path
        return [UInt8](FileManager.default.contents(atPath: path)!)
    }

    func fetchOriginal(_ source: OriginalSource, conditional: Conditional?, into sink: any BodySink,
                       completion: @escaping @Sendable (Result<FetchResult, ServiceError>) -> Void) {
        fetches.withLock { $0 += 1 }
        let body = body.withLock { $0 }
        let etag = "\"\(body.count)\""
        if conditional?.etag == etag { return completion(.success(.notModified(etag: etag, lastModified: nil))) }
        let failure: BodySinkError? = body.withUnsafeBytes { bytes in
            do throws(BodySinkError) { try sink.write(bytes) } catch { return error }
            return nil
        }
        if let failure { return completion(.failure(.internalError(failure.message))) }
        completion(.success(.fetched(length: body.count, etag: etag, lastModified: nil, finalURL: source.url, address: nil)))
    }
}

/// The facts' life beside their original (API.md § /info): recomputed when a
/// revalidation finds new bytes, kept through a 304, counted in memory, purged.
@Suite struct InfoServiceTests {
    private let url = "https://img.example/photo.jpg"

    private func info(_ s: ThumbnailService) -> Result<InfoResult, ServiceError> {
        let box = Mutex<Result<InfoResult, ServiceError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        s.info(try! InfoRequest(url: url)) { result in
            box.withLock { $0 = result }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 60)
        return box.withLock { $0 } ?? .failure(.internalError("no answer in 60 s"))
    }


    @Test func newBytesOnRevalidationGetNewFactsAndA304KeepsThem() throws {
        let dir = NSTemporaryDirectory() + "thumbd-info-service-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let origin = ChangingOrigin(ChangingOrigin.fixture("rocket.jpg"))
        var c = ServiceConfiguration()
        c.diskStore.ttlSeconds = 0   // every look-up past memory revalidates
        let s = ThumbnailService(configuration: c, fetcher: origin, disk: try DiskStore(directory: dir, maxBytes: 50 << 20))
        defer { s.renders.shutdown() }

        let before = s.statistics.memory.bytes
        let first = info(s)
        let firstAnswer = try first.get().info
        #expect(firstAnswer.bytes == origin.body.withLock { $0.count })
        // Memory holds the answer and the facts, every byte of both counted.
        #expect(s.statistics.memory.bytes - before >= 2 * (firstAnswer.facts.thumbhash.count + 64))

        // A 304: same bytes, the same facts, nothing computed again.
        _ = s.memory.removeAll { if case .info = $0 { true } else { false } }
        let same = info(s)
        #expect(try same.get().info.etag == firstAnswer.etag && same.map(\.cache) == .success(.disk))
        #expect(s.statistics.counters.factsComputed == 1 && origin.fetches.withLock { $0 } == 2)

        // New bytes: the old answer and facts go; new facts, a new ETag, on disk too.
        origin.body.withLock { $0 = ChangingOrigin.fixture("coffee.jpg") }
        _ = s.memory.removeAll { if case .info = $0 { true } else { false } }
        let changed = info(s)
        let changedAnswer = try changed.get().info
        #expect(changedAnswer.etag != firstAnswer.etag && changedAnswer.facts != firstAnswer.facts)
        #expect(changedAnswer.bytes == origin.body.withLock { $0.count })
        #expect(s.statistics.counters.factsComputed == 2)
        let sha = Digest.hex(Digest.sha256(origin.body.withLock { $0 }))
        #expect(s.disk?.facts(url: url, sha256: sha) == changedAnswer.facts)

        // A purge takes the answer, the facts and the original.
        #expect(s.purge(url) >= 3)
        #expect(s.cachedInfo(try InfoRequest(url: url)) == nil && s.disk?.facts(url: url, sha256: sha) == nil)
    }

    @Test func aFullQueueIsOverloadedAndNothingIsLeftInFlight() throws {
        let origin = ChangingOrigin(ChangingOrigin.fixture("rocket.jpg"))
        var c = ServiceConfiguration()
        c.workers = 1
        c.maxQueue = 1
        let s = ThumbnailService(configuration: c, fetcher: origin, disk: nil)
        defer { s.renders.shutdown() }
        // One job running (held) and one queued fill the queue.
        let gate = DispatchSemaphore(value: 0)
        _ = try s.renders.submit(cost: 1) { _ = gate.wait(timeout: .now() + 30) }
        #expect(eventually { s.renders.statistics.active == 1 })
        _ = try s.renders.submit(cost: 1) {}
        let refused = info(s)
        gate.signal()
        #expect(refused.map(\.cache) == .failure(.overloaded))
        #expect(s.flightsInProgress.info == 0 && s.flightsInProgress.facts == 0)
        // Not remembered: the next look-up, once the queue has room again, computes.
        #expect(eventually { s.renders.statistics.active == 0 && s.renders.statistics.queued == 0 })
        #expect((try? info(s).get().info.facts.format) == .jpeg)
    }

    /// A first render whose decode is not at the canonical scale answers before its
    /// facts exist: they come from a job behind it, which an `/info` then joins.
    @Test func aFirstRenderAtAnotherScaleLeavesItsFactsToAJobBehindIt() throws {
        let dir = NSTemporaryDirectory() + "thumbd-info-service-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let origin = ChangingOrigin(ChangingOrigin.fixture("rocket.jpg"))
        let engine = HeldEngine(InProcessEngine())
        let s = ThumbnailService(configuration: ServiceConfiguration(), fetcher: origin,
                                 disk: try DiskStore(directory: dir, maxBytes: 50 << 20), engine: engine)
        defer { s.renders.shutdown() }
        let probes = Atomic<Int>(0)
        // The second opening job is the facts job's probe: held until the render has answered, so
        // its answer is first whatever the host's load.
        let answered = DispatchSemaphore(value: 0)
        engine.before.withLock {
            $0 = { if probes.add(1, ordering: .relaxed).newValue == 2 { _ = answered.wait(timeout: .now() + 30) } }
        }
        let rendered = DispatchSemaphore(value: 0)
        let factsAtAnswer = Mutex(-1)
        // 640×427 to 64 wide decodes at 1/8; the canonical copy wants 1/2.
        s.thumbnail(try ThumbnailRequest(query: [("url", url), ("w", "64")], config: ServiceConfiguration())) { result in
            if case .success = result { factsAtAnswer.withLock { $0 = s.statistics.counters.factsComputed } }
            answered.signal()
            rendered.signal()
        }
        #expect(rendered.wait(timeout: .now() + 30) == .success)
        #expect(factsAtAnswer.withLock { $0 } == 0, "answered before the facts were computed")
        #expect((try? info(s).get().info.facts.format) == .jpeg, "/info joins the job's facts")
        #expect(s.statistics.counters.factsComputed == 1 && probes.load(ordering: .relaxed) == 2)
        #expect(origin.fetches.withLock { $0 } == 1)
        // The job's entry goes just after its flight hands the facts out.
        #expect(eventually { s.flightsInProgress.facts == 0 && s.backgroundFacts.withLock { $0.isEmpty } })
    }

    /// One job serves both (API.md § POST /info): a facts job still waiting when a render of
    /// its source that computes the facts anyway starts is withdrawn, and the render answers
    /// the `/info` waiting for it. The facts job could not have run: the one facts slot of two
    /// workers is held throughout, so the `/info` answers only if the render served it.
    @Test func aRenderThatComputesTheFactsWithdrawsTheQueuedFactsJob() throws {
        let dir = NSTemporaryDirectory() + "thumbd-info-service-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let origin = ChangingOrigin(ChangingOrigin.fixture("rocket.jpg"))
        var c = ServiceConfiguration()
        c.workers = 2   // facts jobs hold at most one of them
        let s = ThumbnailService(configuration: c, fetcher: origin, disk: try DiskStore(directory: dir, maxBytes: 50 << 20))
        defer { s.renders.shutdown() }
        let gate = DispatchSemaphore(value: 0)
        defer { gate.signal() }
        _ = try s.renders.submit(cost: 1, kind: .facts) { _ = gate.wait(timeout: .now() + 60) }
        #expect(eventually { s.renders.statistics.active == 1 })
        let infoAnswered = DispatchSemaphore(value: 0)
        let infoResult = Mutex<Result<InfoResult, ServiceError>?>(nil)
        s.info(try InfoRequest(url: url)) { result in
            infoResult.withLock { $0 = result }
            infoAnswered.signal()
        }
        #expect(eventually { s.renders.statistics.queued == 1 }, "the facts job waits for the held slot")
        // 640×427 to 300 wide decodes at the canonical 1/2: the render computes the facts.
        let rendered = DispatchSemaphore(value: 0)
        let ok = Mutex(false)
        s.thumbnail(try ThumbnailRequest(query: [("url", url), ("w", "300")], config: c)) { result in
            if case .success = result { ok.withLock { $0 = true } }
            rendered.signal()
        }
        #expect(rendered.wait(timeout: .now() + 30) == .success && ok.withLock { $0 })
        #expect(infoAnswered.wait(timeout: .now() + 30) == .success, "answered by the render, the facts slot still held")
        #expect((try? infoResult.withLock { $0 }?.get().info.facts.format) == .jpeg)
        // The render's job ends just after its answer: then only the held job is left, nothing queued.
        #expect(eventually { s.renders.statistics.queued == 0 && s.renders.statistics.active == 1 }, "withdrawn, not run")
        #expect(s.statistics.counters.factsComputed == 1 && s.flightsInProgress.facts == 0)
        gate.signal()
        #expect(eventually { s.renders.statistics.active == 0 && s.renders.statistics.queued == 0 })
        #expect(s.statistics.counters.factsComputed == 1, "one job computed them")
    }

    /// A source a render started for is on a screen (issue 38): its facts job goes ahead of
    /// one queued before it, whichever came first — the render (its mark moves the job
    /// submitted after it) or a first render's background job an `/info` then joins. The one
    /// facts slot of two workers is held while they queue; the job queued first would block
    /// on a second gate, so the `/info` answers only if its job went first.
    @Test(arguments: [true, false]) func aSourceOnScreenHasItsFactsFirst(renderHeld: Bool) throws {
        let dir = NSTemporaryDirectory() + "thumbd-info-service-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let origin = ChangingOrigin(ChangingOrigin.fixture("rocket.jpg"))
        let engine = HeldEngine(InProcessEngine())
        var c = ServiceConfiguration()
        c.workers = 2   // facts jobs hold at most one of them
        let s = ThumbnailService(configuration: c, fetcher: origin, disk: try DiskStore(directory: dir, maxBytes: 50 << 20),
                                 engine: engine)
        defer { s.renders.shutdown() }
        let slot = DispatchSemaphore(value: 0), earlier = DispatchSemaphore(value: 0), render = DispatchSemaphore(value: 0)
        defer {
            slot.signal()
            earlier.signal()
            render.signal()
        }
        // The render's opening job waits (renderHeld): the facts job comes while it runs.
        let openings = Atomic<Int>(0)
        if renderHeld {
            engine.before.withLock {
                $0 = { if openings.add(1, ordering: .relaxed).newValue == 1 { _ = render.wait(timeout: .now() + 60) } }
            }
        }
        _ = try s.renders.submit(cost: 1, kind: .facts) { _ = slot.wait(timeout: .now() + 60) }
        #expect(eventually { s.renders.statistics.active == 1 })
        _ = try s.renders.submit(cost: 1, kind: .facts) { _ = earlier.wait(timeout: .now() + 60) }
        // 640×427 to 64 wide decodes at 1/8: the render leaves the facts to a job.
        let rendered = DispatchSemaphore(value: 0)
        s.thumbnail(try ThumbnailRequest(query: [("url", url), ("w", "64")], config: c)) { _ in rendered.signal() }
        if renderHeld {
            #expect(eventually { openings.load(ordering: .relaxed) == 1 }, "the render runs, held")
        } else {
            #expect(rendered.wait(timeout: .now() + 30) == .success)
            #expect(eventually { s.backgroundFacts.withLock { !$0.isEmpty } }, "its facts left to a background job")
        }
        let answered = DispatchSemaphore(value: 0)
        let jpeg = Mutex(false)
        s.info(try InfoRequest(url: url)) { result in
            jpeg.withLock { $0 = (try? result.get().info.facts.format) == .jpeg }
            answered.signal()
        }
        // Its job in the table (submitted after the render's mark), or the background job out
        // of it (promoted): moved by then.
        #expect(eventually { renderHeld ? s.queuedFacts.withLock { $0[url] != nil } : s.backgroundFacts.withLock { $0.isEmpty } })
        #expect(s.renders.statistics.queued == 2, "both facts jobs wait for the slot")
        slot.signal()
        #expect(answered.wait(timeout: .now() + 30) == .success, "the source on screen first")
        #expect(jpeg.withLock { $0 })
        earlier.signal()
        render.signal()
        if renderHeld { #expect(rendered.wait(timeout: .now() + 30) == .success) }
        #expect(eventually { s.renders.statistics.active == 0 && s.renders.statistics.queued == 0 })
    }

    /// With no memory cache and no disk store nothing could keep the facts: renders that do
    /// not need the focus compute none (each would compute them again), and one that needs
    /// the focus still finds it.
    @Test func factsNothingCouldKeepAreNotComputedByRenders() throws {
        let origin = ChangingOrigin(ChangingOrigin.fixture("rocket.jpg"))
        var c = ServiceConfiguration()
        c.memoryCacheBytes = 0
        let s = ThumbnailService(configuration: c, fetcher: origin, disk: nil)
        defer { s.renders.shutdown() }
        // 640×427: w=64 decodes at 1/8 (facts would be left to a job), w=300 at the canonical 1/2 (inline).
        for query in [[("w", "64")], [("w", "300")], [("w", "64"), ("h", "64"), ("fit", "cover")]] {
            let done = DispatchSemaphore(value: 0)
            let ok = Mutex(false)
            s.thumbnail(try ThumbnailRequest(query: [("url", url)] + query, config: c)) { result in
                if case .success = result { ok.withLock { $0 = true } }
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 30) == .success && ok.withLock { $0 }, "\(query)")
        }
        #expect(eventually { s.renders.statistics.active == 0 && s.renders.statistics.queued == 0 })
        #expect(s.statistics.counters.factsComputed == 0 && s.flightsInProgress.facts == 0)
        // An attention crop needs the focus: computed for it (and, again, kept nowhere).
        let done = DispatchSemaphore(value: 0)
        s.thumbnail(try ThumbnailRequest(query: [("url", url), ("w", "64"), ("h", "64"), ("fit", "cover"),
                                                 ("gravity", "attention")], config: c)) { _ in done.signal() }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(s.statistics.counters.factsComputed == 1)
    }
}
