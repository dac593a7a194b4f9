import Foundation
import Synchronization
import Testing
@testable import ThumbFetch
import ThumbRender
@testable import ThumbService
import ThumbTestSupport

/// SourcesAndLimits.md § Renders: the header probe runs where renders run — on a
/// render worker, admitted by memory, under the render deadline — and a
/// decode that needs more than the probe was admitted with waits again at
/// the head of the queue (issue 19 item 7).
@Suite(.serialized) struct ProbeOnRenderWorkerTests {
    /// Holds or slows the first job of each render (the header probe's), on the render thread.
    private let engine = HeldEngine(InProcessEngine())

    /// One render worker, so a test can hold it.
    private func service(clock: some Clock<Duration> = ContinuousClock(),
                         _ change: (inout ServiceConfiguration) -> Void = { _ in }) throws -> ThumbnailService {
        try loopbackService("probe", engine: engine, clock: clock) { c in
            c.workers = 1
            change(&c)
        }
    }

    private func cleanUp(_ s: ThumbnailService) {
        engine.before.withLock { $0 = nil }
        s.renders.shutdown()
        if let dir = s.disk?.directory { try? FileManager.default.removeItem(atPath: dir) }
    }

    /// With the one worker busy, a source whose probe fails (not an image)
    /// gets no answer until the worker is free: the probe waits for a worker
    /// like any render. (It used to run on the fetch queue and answer at once.)
    @Test func theProbeWaitsForARenderWorker() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let s = try service()
        defer { cleanUp(s) }
        let gate = DispatchSemaphore(value: 0)
        try s.renders.submit(cost: 1) { gate.wait() }
        #expect(eventually { s.renders.statistics.active == 1 }, "the worker is held")
        let box = Mutex<Result<ThumbnailResult, ServiceError>?>(nil)
        s.thumbnail(try thumbnailRequest(origin.url("/text.txt"))) { result in box.withLock { $0 = result } }
        #expect(eventually { s.renders.statistics.queued == 1 }, "the probe never queued")
        // A window for a wrong answer to show itself: what must not happen has no event to wait on.
        usleep(300_000)
        #expect(box.withLock { $0 } == nil, "answered without a render worker: \(String(describing: box.withLock { $0 }))")
        gate.signal()
        #expect(eventually { box.withLock { $0 } != nil })
        guard case .failure(.unsupportedFormat)? = box.withLock({ $0 }) else {
            Issue.record("\(String(describing: box.withLock { $0 }))"); return
        }
        #expect(s.statistics.counters.renderFailures == 1)
        #expect(eventually { s.renders.statistics == .init() }, "\(s.renders.statistics)")
    }

    /// A probe that takes longer than `limits.maxRenderSeconds` (a hostile
    /// file can cost a C library seconds) runs on a render worker and uses up
    /// the render's deadline: 422, not remembered, and the next request renders.
    @Test func aSlowProbeRunsOnARenderWorkerAndCountsAgainstTheDeadline() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        // The deadline is on the service's clock, which the slow probe moves past it: no sleep.
        let clock = ManualClock()
        let s = try service(clock: clock) { $0.limits.maxRenderSeconds = 0.5 }
        defer { cleanUp(s) }   // the queue's shutdown ends its idle check asleep on this clock
        // The one render worker, as the queue runs a job on it.
        let worker = Mutex<pthread_t?>(nil)
        let seen = DispatchSemaphore(value: 0)
        try s.renders.submit(cost: 1) { worker.withLock { $0 = pthread_self() }; seen.signal() }
        #expect(seen.wait(timeout: .now() + 10) == .success)
        let probedOn = Mutex<[pthread_t]>([])
        engine.before.withLock {
            $0 = {
                probedOn.withLock { $0.append(pthread_self()) }
                clock.advance(by: .milliseconds(800))
            }
        }
        let r = try thumbnailRequest(origin.url("/cat.jpg"))
        guard case .failure(.renderTimedOut) = answer(s, r) else { Issue.record("the probe's time was not counted"); return }
        let threads = probedOn.withLock { $0 }
        #expect(threads.count == 1 && threads.allSatisfy { pthread_equal($0, worker.withLock { $0 }!) != 0 },
                "not probed on the render worker")

        engine.before.withLock { $0 = nil }
        guard case .success = answer(s, r) else { Issue.record("a deadline failure was remembered"); return }
        #expect(origin.hits("/cat.jpg") == 1)
    }

    /// The probe job is admitted at `RenderPlan.probeCost`; a decode whose
    /// estimate is larger (a 1000 px enlargement of a 640×427 JPEG) goes back
    /// to the head of the queue, ahead of a render that was waiting before it,
    /// and every figure of `/stats` comes back to rest afterwards.
    @Test func aDecodeLargerThanItsProbeWaitsAgainAheadOfNewWork() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let s = try service()
        defer { cleanUp(s) }
        guard case .success = answer(s, try thumbnailRequest(origin.url("/cat.jpg"), [("w", "10")])) else {
            Issue.record("warm-up failed"); return
        }
        #expect(eventually { s.renders.statistics.active == 0 })
        let big = try thumbnailRequest(origin.url("/cat.jpg"), [("w", "1000"), ("enlarge", "1"), ("format", "png")])
        let probeCost = RenderPlan.probeCost(sourceBytes: TestOrigin.jpeg.count,
                                             budget: s.config.limits.maxDecodeMemoryBytes)
        let estimate = try ThumbnailPipeline.plan(source: TestOrigin.jpeg, variant: big.variant.prepared,
                                                  limits: s.config.pipelineLimits).estimatedMemory
        try #require(estimate > probeCost, "estimate \(estimate) fits the probe's \(probeCost): no second job")

        let memoryWhileProbing = Mutex<[Int]>([])
        // The closure holds the queue, not the service: the service (through its engine) holding a
        // closure that holds the service would be a cycle LeakSanitizer reports.
        let renders = s.renders
        engine.before.withLock { $0 = { memoryWhileProbing.withLock { $0.append(renders.statistics.memoryInUse) } } }
        let gate = DispatchSemaphore(value: 0)
        try s.renders.submit(cost: 1) { gate.wait() }
        #expect(eventually { s.renders.statistics.active == 1 }, "the worker is held")
        let order = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        for (name, r) in [("big", big), ("small", try thumbnailRequest(origin.url("/cat.jpg"), [("w", "20")]))] {
            s.thumbnail(r) { result in
                if case .success = result { order.withLock { $0.append(name) } }
                done.signal()
            }
        }
        #expect(eventually { s.renders.statistics.queued == 2 })
        gate.signal()
        for _ in 0..<2 { #expect(done.wait(timeout: .now() + 60) == .success) }
        #expect(order.withLock { $0 } == ["big", "small"], "the big decode went behind new work")
        #expect(memoryWhileProbing.withLock { $0 }.first == probeCost, "probes admitted at \(memoryWhileProbing.withLock { $0 })")
        #expect(eventually { s.renders.statistics == .init() }, "\(s.renders.statistics)")
        let counters = s.statistics.counters
        #expect(counters.renderCompleted == 3 && counters.renderFailures == 0, "one count per render, not per job")
    }

    /// A decode over the whole budget is refused once its header is read,
    /// as before: 422 image_too_large, not remembered (it depends on the limit).
    @Test func aPlanOverTheWholeBudgetIs422() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let s = try service { $0.limits.maxDecodeMemoryBytes = 12 << 20 }
        defer { cleanUp(s) }
        let big = try thumbnailRequest(origin.url("/cat.jpg"), [("w", "2000"), ("enlarge", "1")])
        guard case .failure(.imageTooLarge(let message)) = answer(s, big) else { Issue.record("not refused"); return }
        #expect(message.contains("maxDecodeMemoryBytes"), "\(message)")
        guard case .success = answer(s, try thumbnailRequest(origin.url("/cat.jpg"))) else { Issue.record("small refused"); return }
        // The answer comes from inside the job; the worker counts it a moment longer.
        #expect(eventually { s.renders.statistics == .init() }, "\(s.renders.statistics)")
    }
}
