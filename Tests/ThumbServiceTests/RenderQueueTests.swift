import Foundation
import Synchronization
import Testing
import ThumbRender
@testable import ThumbService
import ThumbTestSupport

/// A gate jobs block on until the test opens it.
private final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    func wait() { semaphore.wait() }
    func open(_ n: Int = 1) { for _ in 0..<n { semaphore.signal() } }

    /// Occupies one more worker of `queue` until the gate opens.
    func hold(_ queue: RenderQueue) throws {
        let active = queue.statistics.active
        try queue.submit(cost: 1) { self.wait() }
        #expect(waitUntil { queue.statistics.active == active + 1 })
    }
}

/// A count a hook raises from any thread.
private final class Calls: Sendable {
    private let count = Mutex(0)
    func withLock<R>(_ body: (inout Int) -> R) -> R { count.withLock { body(&$0) } }
}

private final class Recorder: Sendable {
    private let state = Mutex<(order: [String], running: Int, maxRunning: Int, threads: Set<String>)>(([], 0, 0, []))
    func start(_ name: String) {
        state.withLock {
            $0.order.append(name)
            $0.running += 1
            $0.maxRunning = max($0.maxRunning, $0.running)
            $0.threads.insert(currentThreadName())
        }
    }
    func end() { state.withLock { $0.running -= 1 } }
    var order: [String] { state.withLock { $0.order } }
    var maxRunning: Int { state.withLock { $0.maxRunning } }
    var threads: Set<String> { state.withLock { $0.threads } }

    /// A job that records `name` and signals `done`.
    func job(_ name: String, _ done: DispatchSemaphore) -> @Sendable () -> Void {
        { self.start(name); self.end(); done.signal() }
    }
}

private func currentThreadName() -> String { "\(pthread_self())" }

/// Polls what a worker thread does (`eventually`); only for work on other
/// threads: time on the queue's clock is moved by hand.
@discardableResult
private func waitUntil(_ condition: () -> Bool) -> Bool { eventually(10, condition) }

@Suite struct RenderQueueTests {
    /// Facts jobs hold at most half the workers (at least one): a render queued behind a thousand of
    /// them starts on the other worker at once (issue 34: a live thumbnail waited for a `POST /info`
    /// of 1 000 heavy sources to answer), and the facts jobs still all run, in their order.
    @Test func factsJobsHoldAtMostHalfTheWorkersAndRendersPassThem() throws {
        let queue = RenderQueue(workers: 4, maxQueue: 2000, memoryBudget: 1 << 30)
        defer { queue.shutdown() }
        #expect(queue.maxFacts == 2)
        let gate = Gate()
        let facts = Recorder()
        let running = Mutex((facts: 0, most: 0))
        for i in 0..<1000 {
            try queue.submit(cost: 1, kind: .facts) {
                running.withLock { $0.facts += 1; $0.most = max($0.most, $0.facts) }
                if i < 2 { gate.wait() }
                facts.start("f\(i)"); facts.end()
                running.withLock { $0.facts -= 1 }
            }
        }
        #expect(waitUntil { queue.statistics.active == 2 }, "two facts jobs hold two of the four workers")
        let rendered = DispatchSemaphore(value: 0)
        for _ in 0..<2 { try queue.submit(cost: 1) { rendered.signal() } }
        #expect(rendered.wait(timeout: .now() + 10) == .success && rendered.wait(timeout: .now() + 10) == .success,
                "the renders behind 998 waiting facts jobs started")
        #expect(facts.order.isEmpty, "no facts job ran past the two held ones")
        gate.open(2)
        #expect(waitUntil { facts.order.count == 1000 })
        #expect(Set(facts.order).count == 1000, "every facts job ran once")
        #expect(running.withLock { $0.most } == 2, "never more than half the workers on facts")
    }

    /// Facts go ahead of every render waiting at their priority (issue 38: a
    /// list's rows lay out from the facts before any thumbnail shows), in
    /// their own order; a facts job still waiting can be withdrawn (a render
    /// of its source computes the facts anyway), one already running not.
    @Test func factsJobsGoAheadOfWaitingRendersAndMayBeWithdrawn() throws {
        let queue = RenderQueue(workers: 1, maxQueue: 10, memoryBudget: 1000)
        defer { queue.shutdown() }
        let gate = Gate()
        let done = DispatchSemaphore(value: 0)
        let recorder = Recorder()
        try queue.submit(cost: 1) { gate.wait(); done.signal() }
        #expect(waitUntil { queue.statistics.active == 1 })
        try queue.submit(cost: 1, recorder.job("render 1", done))
        try queue.submit(cost: 1, recorder.job("render 2", done))
        try queue.submit(cost: 1, kind: .facts, recorder.job("facts 1", done))
        let withdrawn = try queue.submit(cost: 1, kind: .facts, recorder.job("facts 2", done))
        try queue.submit(cost: 1, kind: .facts, recorder.job("facts 3", done))
        #expect(queue.withdraw(withdrawn) && !queue.withdraw(withdrawn), "out of the queue once")
        #expect(queue.statistics.queued == 4)
        gate.open()
        for _ in 0..<5 { #expect(done.wait(timeout: .now() + 10) == .success) }
        #expect(recorder.order == ["facts 1", "facts 3", "render 1", "render 2"])
    }

    /// A facts job whose source a render is starting for (a row on screen) moves ahead of the
    /// facts jobs of rows only prefetched, behind those moved before it, in its own line;
    /// one already moved, or running, stays where it is.
    @Test func hurriedFactsJobsGoFirstInTheirOrder() throws {
        let queue = RenderQueue(workers: 1, maxQueue: 10, memoryBudget: 1000)
        defer { queue.shutdown() }
        let gate = Gate()
        let done = DispatchSemaphore(value: 0)
        let recorder = Recorder()
        try queue.submit(cost: 1) { gate.wait(); done.signal() }
        #expect(waitUntil { queue.statistics.active == 1 })
        try queue.submit(cost: 1, kind: .facts, recorder.job("facts 1", done))
        try queue.submit(cost: 1, kind: .facts, recorder.job("facts 2", done))
        let third = try queue.submit(cost: 1, kind: .facts, recorder.job("facts 3", done))
        let fourth = try queue.submit(cost: 1, kind: .facts, recorder.job("facts 4", done))
        try queue.submit(cost: 1, priority: .prefetch, kind: .facts, recorder.job("prefetch facts", done))
        queue.hurry(fourth)
        queue.hurry(third)
        queue.hurry(fourth)   // moved already: stays first
        #expect(queue.statistics.queued == 5)
        gate.open()
        for _ in 0..<6 { #expect(done.wait(timeout: .now() + 10) == .success) }
        #expect(recorder.order == ["facts 4", "facts 3", "facts 1", "facts 2", "prefetch facts"])
    }

    /// One worker: facts jobs may take it (at least one), in order with the renders.
    @Test func withOneWorkerFactsJobsStillRun() throws {
        let queue = RenderQueue(workers: 1, maxQueue: 10, memoryBudget: 1000)
        defer { queue.shutdown() }
        let done = DispatchSemaphore(value: 0)
        let recorder = Recorder()
        try queue.submit(cost: 1, kind: .facts, recorder.job("facts", done))
        try queue.submit(cost: 1, recorder.job("render", done))
        for _ in 0..<2 { #expect(done.wait(timeout: .now() + 10) == .success) }
        #expect(recorder.order == ["facts", "render"])
    }

    /// Memory held outside jobs (a download in memory, SourcesAndLimits.md
    /// § Downloads) counts in the budget: a hold waits while renders leave
    /// no room, renders then wait for the held bytes (one still starts when
    /// none runs), and giving the hold back (or dropping it) lets them run.
    @Test func heldMemoryWaitsForRoomAndRendersWaitForIt() throws {
        let queue = RenderQueue(workers: 2, maxQueue: 10, memoryBudget: 1000)
        defer { queue.shutdown() }
        let gate = Gate()
        try queue.submit(cost: 700) { gate.wait() }
        #expect(waitUntil { queue.statistics.active == 1 })
        let granted = Mutex<MemoryHold?>(nil)
        queue.hold(400) { hold in granted.withLock { $0 = hold } }
        #expect(queue.holds.waiting == 1 && granted.withLock { $0 } == nil, "granted beside 700 of 1000 running")
        gate.open()
        #expect(waitUntil { granted.withLock { $0 } != nil }, "not granted once the render ended")
        #expect(queue.holds.bytes == 400 && queue.holds.waiting == 0)

        let done = DispatchSemaphore(value: 0)
        try queue.submit(cost: 100) { gate.wait(); done.signal() }   // 400 + 100 fit
        #expect(waitUntil { queue.statistics.active == 1 })
        try queue.submit(cost: 600) { done.signal() }                // 400 + 100 + 600 do not
        // A window for a wrong start to show itself: what must not happen has no event to wait on.
        usleep(100_000)
        #expect(queue.statistics.queued == 1, "a render started past the held bytes")
        granted.withLock { $0 = nil }                                // dropped: given back
        #expect(waitUntil { queue.statistics.queued == 0 }, "the render did not start once the hold went")
        #expect(queue.holds.bytes == 0)
        gate.open()
        #expect(done.wait(timeout: .now() + 10) == .success && done.wait(timeout: .now() + 10) == .success)
    }

    @Test func jobsRunOnWorkerThreadsUpToTheWorkerCount() throws {
        let queue = RenderQueue(workers: 2, maxQueue: 10, memoryBudget: 1000)
        defer { queue.shutdown() }
        let recorder = Recorder()
        let gate = Gate()
        let done = DispatchSemaphore(value: 0)
        for i in 0..<6 {
            try queue.submit(cost: 1) {
                recorder.start("\(i)")
                gate.wait()
                recorder.end()
                done.signal()
            }
        }
        #expect(waitUntil { queue.statistics.active == 2 })
        #expect(queue.statistics == .init(active: 2, queued: 4, memoryInUse: 2), "both workers held, the rest wait")
        gate.open(6)
        for _ in 0..<6 { done.wait() }
        #expect(recorder.maxRunning == 2)
        #expect(!recorder.threads.contains(currentThreadName()), "never on the submitting thread")
        #expect(recorder.threads.count <= 2)
    }

    /// The kernel knows the workers by name (top -H, perf, /proc/PID/task/*/comm):
    /// Foundation's Thread.name alone never reached it on Linux.
    @Test func workersAreNamedForTheKernel() throws {
        let queue = RenderQueue(workers: 2, maxQueue: 10, memoryBudget: 1000)
        defer { queue.shutdown() }
        let name = Mutex("")
        let done = DispatchSemaphore(value: 0)
        try queue.submit(cost: 1) {
            let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            name.withLock { $0 = comm.trimmingCharacters(in: .whitespacesAndNewlines) }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(["thumbd-render-0", "thumbd-render-1"].contains(name.withLock { $0 }), "\(name.withLock { $0 })")
    }

    @Test func aFullQueueRejectsWithOverloaded() throws {
        let queue = RenderQueue(workers: 1, maxQueue: 2, memoryBudget: 1000)
        defer { queue.shutdown() }
        let gate = Gate()
        try gate.hold(queue)
        try queue.submit(cost: 1) { gate.wait() }
        try queue.submit(cost: 1) { gate.wait() }
        #expect(throws: ServiceError.overloaded) { try queue.submit(cost: 1) {} }
        #expect(queue.statistics == .init(active: 1, queued: 2, memoryInUse: 1))
        gate.open(3)
        waitUntil { queue.statistics.active == 0 && queue.statistics.queued == 0 }
        #expect(queue.statistics.memoryInUse == 0)
    }

    /// The second job of a render (its probe found the decode needs more
    /// memory than it was admitted with) goes before new work and is never
    /// refused for a full queue: the render was admitted already.
    @Test func aJobSubmittedAheadRunsBeforeWaitingWorkAndIgnoresMaxQueue() throws {
        let queue = RenderQueue(workers: 1, maxQueue: 2, memoryBudget: 1000)
        defer { queue.shutdown() }
        let recorder = Recorder()
        let gate = Gate()
        try gate.hold(queue)
        let done = DispatchSemaphore(value: 0)
        try queue.submit(cost: 1, recorder.job("new 1", done))
        try queue.submit(cost: 1, recorder.job("new 2", done))
        #expect(throws: ServiceError.overloaded) { try queue.submit(cost: 1) {} }
        try queue.submit(cost: 1, priority: .prefetch, recorder.job("prefetch", done))
        try queue.submit(cost: 500, ahead: true, recorder.job("decode", done))
        try queue.submit(cost: 1, priority: .prefetch, ahead: true, recorder.job("prefetch decode", done))
        #expect(queue.statistics == .init(active: 1, queued: 5, memoryInUse: 1))
        #expect(throws: ServiceError.imageTooLarge("decoding needs about 1001 bytes, over maxDecodeMemoryBytes 1000")) {
            try queue.submit(cost: 1001, ahead: true) {}
        }
        gate.open()
        for _ in 0..<5 { #expect(done.wait(timeout: .now() + 10) == .success) }
        #expect(recorder.order == ["decode", "new 1", "new 2", "prefetch decode", "prefetch"])
    }

    @Test func memoryAdmissionQueuesInsteadOfOvercommitting() throws {
        let queue = RenderQueue(workers: 2, maxQueue: 10, memoryBudget: 100)
        defer { queue.shutdown() }
        let recorder = Recorder()
        let gate = Gate()
        let done = DispatchSemaphore(value: 0)
        for i in 0..<4 {
            try queue.submit(cost: 60) {
                recorder.start("\(i)")
                gate.wait()
                recorder.end()
                done.signal()
            }
        }
        #expect(waitUntil { queue.statistics.active == 1 })
        #expect(queue.statistics == .init(active: 1, queued: 3, memoryInUse: 60), "a worker is idle, but 120 > 100")
        for n in 1...4 {
            gate.open()
            done.wait()
            if n < 4 { #expect(waitUntil { recorder.order.count == n + 1 }) }
        }
        #expect(recorder.maxRunning == 1, "two 60-byte decodes never run together under a 100-byte budget")
        #expect(throws: ServiceError.self) { try queue.submit(cost: 101) {} }
    }

    /// What each worker process holds beside its job (`RenderEngine.workerBaseBytes`)
    /// is set aside from the budget once per worker: two 30-byte decodes that
    /// a 100-byte budget would run together wait for each other beside two
    /// 20-byte bases, and a decode over what the bases leave is refused,
    /// naming both figures.
    @Test func theWorkersBasesAreSetAsideFromTheBudget() throws {
        let queue = RenderQueue(workers: 2, maxQueue: 10, memoryBudget: 100, reservedPerWorker: 20)
        defer { queue.shutdown() }
        #expect(queue.memoryBudget == 60)
        #expect(throws: ServiceError.imageTooLarge("decoding needs about 61 bytes, over the 60 bytes "
                                                    + "maxDecodeMemoryBytes 100 leaves beside its workers' bases (40)")) {
            try queue.submit(cost: 61) {}
        }
        let recorder = Recorder()
        let gate = Gate()
        let done = DispatchSemaphore(value: 0)
        for i in 0..<2 {
            try queue.submit(cost: 31) {
                recorder.start("\(i)")
                gate.wait()
                recorder.end()
                done.signal()
            }
        }
        #expect(waitUntil { queue.statistics.active == 1 })
        #expect(queue.statistics == .init(active: 1, queued: 1, memoryInUse: 31), "62 > 100 - 2 x 20")
        gate.open(2)
        for _ in 0..<2 { #expect(done.wait(timeout: .now() + 10) == .success) }
        #expect(recorder.maxRunning == 1)
    }

    /// A 300 px thumbnail need not wait behind 4096² renders: while the head
    /// waits for a large render (over 1/16 of the budget) to finish, a small
    /// job that fits the room left passes it on the idle worker.
    @Test func aSmallJobPassesAHeadWaitingForALargeRender() throws {
        let queue = RenderQueue(workers: 2, maxQueue: 10, memoryBudget: 1600)
        defer { queue.shutdown() }
        let gate = Gate()
        let recorder = Recorder()
        let done = DispatchSemaphore(value: 0)
        try queue.submit(cost: 1000) { recorder.start("A"); gate.wait(); recorder.end(); done.signal() }
        // Started, not only taken: a loaded machine can let the small job record first otherwise.
        waitUntil { recorder.order == ["A"] }
        try queue.submit(cost: 1000, recorder.job("B", done))   // 2000 > 1600: waits for A
        try queue.submit(cost: 50, recorder.job("small", done))
        #expect(done.wait(timeout: .now() + 5) == .success, "the small job ran while A held its worker")
        #expect(recorder.order == ["A", "small"])
        gate.open()
        for _ in 0..<2 { done.wait() }
        #expect(recorder.order == ["A", "small", "B"])
    }

    /// No starvation: with no large render running, nothing passes the head,
    /// which so waits only for the small jobs already running.
    @Test func withoutALargeRenderRunningNothingPassesTheHead() throws {
        let queue = RenderQueue(workers: 2, maxQueue: 10, memoryBudget: 1600)
        defer { queue.shutdown() }
        let gate = Gate()
        let recorder = Recorder()
        let done = DispatchSemaphore(value: 0)
        try queue.submit(cost: 100) { recorder.start("held"); gate.wait(); recorder.end(); done.signal() }
        waitUntil { queue.statistics.active == 1 }
        try queue.submit(cost: 1560, recorder.job("head", done))   // 1660 > 1600: waits
        try queue.submit(cost: 50, recorder.job("small", done))    // fits now, but nothing large runs
        // The idle worker has every chance to take the small job; it must not.
        for _ in 0..<50 where queue.statistics.active == 1 { usleep(2000) }
        #expect(queue.statistics.active == 1 && queue.statistics.queued == 2)
        gate.open()
        for _ in 0..<3 { done.wait() }
        // The head ran first; the small job then waited for room beside it (1560 + 50 > 1600).
        #expect(recorder.order == ["held", "head", "small"])
    }

    @Test func liveJobsOvertakePrefetchAndPrefetchNeverCausesLive503s() throws {
        let queue = RenderQueue(workers: 1, maxQueue: 1, memoryBudget: 1000, maxPrefetch: 2)
        defer { queue.shutdown() }
        let gate = Gate()
        let recorder = Recorder()
        let done = DispatchSemaphore(value: 0)
        try gate.hold(queue)
        try queue.submit(cost: 1, priority: .prefetch, recorder.job("p1", done))
        try queue.submit(cost: 1, priority: .prefetch, recorder.job("p2", done))
        #expect(throws: ServiceError.overloaded) { try queue.submit(cost: 1, priority: .prefetch) {} }
        try queue.submit(cost: 1, recorder.job("live", done))
        gate.open()
        for _ in 0..<3 { done.wait() }
        #expect(recorder.order == ["live", "p1", "p2"])
    }

    /// A live request that joins a prefetch render must not wait for a gap in
    /// live traffic: the promoted job goes to the back of the live queue.
    @Test func aPromotedPrefetchJobRunsAmongLiveJobs() throws {
        let queue = RenderQueue(workers: 1, maxQueue: 10, memoryBudget: 1000)
        defer { queue.shutdown() }
        let gate = Gate()
        let recorder = Recorder()
        let done = DispatchSemaphore(value: 0)
        try gate.hold(queue)
        let prefetch = try queue.submit(cost: 1, priority: .prefetch, recorder.job("p", done))
        try queue.submit(cost: 1, recorder.job("l1", done))
        queue.promote(prefetch)
        try queue.submit(cost: 1, recorder.job("l2", done))
        queue.promote(prefetch)   // a second promotion finds nothing to move
        gate.open()
        for _ in 0..<3 { done.wait() }
        #expect(recorder.order == ["l1", "p", "l2"])
    }

    /// The watchdog's view: how long the oldest running job has been running,
    /// on the queue's clock.
    @Test func reportsTheAgeOfTheOldestRunningJob() throws {
        let clock = ManualClock()
        let queue = RenderQueue(workers: 2, maxQueue: 10, memoryBudget: 1000, clock: clock)
        defer { queue.shutdown() }
        #expect(queue.oldestRunning == nil)
        let gate = Gate()
        try gate.hold(queue)
        clock.advance(by: .milliseconds(300))
        #expect(queue.oldestRunning == .milliseconds(300))
        try gate.hold(queue)
        clock.advance(by: .seconds(2))
        #expect(queue.oldestRunning == .milliseconds(2300), "the oldest, not the latest")
        gate.open(2)
        #expect(waitUntil { queue.statistics.active == 0 })
        #expect(queue.oldestRunning == nil)
    }

    /// A finished job releases what it captured (the original's bytes) at once,
    /// not when later jobs push it out of the queue's storage (issue 14: 40
    /// renders of 48 MB originals held 2 GB).
    @Test func aFinishedJobReleasesWhatItCaptured() throws {
        final class Original: Sendable {}
        let queue = RenderQueue(workers: 1, maxQueue: 10, memoryBudget: 1000)
        defer { queue.shutdown() }
        weak var held: Original?
        let done = DispatchSemaphore(value: 0)
        do {
            let original = Original()
            held = original
            try queue.submit(cost: 1) { withExtendedLifetime(original) {}; done.signal() }
        }
        done.wait()
        waitUntil { queue.statistics.active == 0 && held == nil }
        #expect(held == nil)
    }

    /// The idle hook waits out `idleDelay` on the queue's clock: the test
    /// sees the check scheduled (a sleeper on the manual clock), moves the
    /// clock past it and awaits the check, so nothing depends on how long
    /// a thread takes to run.
    @Test func theIdleHookRunsOnceAfterTheQueueDrainsAndNotWhileJobsRun() async throws {
        let clock = ManualClock()
        let idleCalls = Mutex(0)
        let queue = RenderQueue(workers: 2, maxQueue: 10, memoryBudget: 10, clock: clock, idleDelay: .seconds(1),
                                whenIdle: { idleCalls.withLock { $0 += 1 } })
        defer { queue.shutdown() }
        let gate = Gate()
        try gate.hold(queue)
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<3 { try queue.submit(cost: 1) { done.signal() } }
        for _ in 0..<3 { done.wait() }
        // One worker is still busy: quick jobs finishing beside it never count as idle.
        clock.advance(by: .seconds(5))
        #expect(queue.idleCheck == nil && idleCalls.withLock { $0 } == 0)
        gate.open()
        #expect(waitUntil { clock.sleepers == 1 }, "the check is scheduled once the last job ends")
        let check = queue.idleCheck
        clock.advance(by: .milliseconds(999))
        #expect(clock.sleepers == 1 && idleCalls.withLock { $0 } == 0, "not before the delay")
        clock.advance(by: .milliseconds(1))
        await check?.value
        #expect(idleCalls.withLock { $0 } == 1)
        clock.advance(by: .seconds(5))
        #expect(clock.sleepers == 0 && idleCalls.withLock { $0 } == 1, "once")
    }

    /// A one-worker queue on a manual clock whose one job has ended, its
    /// idle check asleep for the second of `idleDelay`; the hook counts its calls.
    private func queueWentIdle() throws -> (RenderQueue, ManualClock, Calls) {
        let clock = ManualClock()
        let idleCalls = Calls()
        let queue = RenderQueue(workers: 1, maxQueue: 10, memoryBudget: 10, clock: clock, idleDelay: .seconds(1),
                                whenIdle: { idleCalls.withLock { $0 += 1 } })
        let done = DispatchSemaphore(value: 0)
        try queue.submit(cost: 1) { done.signal() }
        done.wait()
        #expect(waitUntil { clock.sleepers == 1 })
        return (queue, clock, idleCalls)
    }

    @Test func aJobStartingWithinTheIdleDelayCancelsThatIdleCall() async throws {
        let (queue, clock, idleCalls) = try queueWentIdle()
        defer { queue.shutdown() }
        let cancelled = queue.idleCheck
        let gate = Gate()
        try gate.hold(queue)   // starts within the delay after the first job went idle
        clock.advance(by: .seconds(1))
        await cancelled?.value
        #expect(idleCalls.withLock { $0 } == 0)
        gate.open()
        #expect(waitUntil { clock.sleepers == 1 })
        let check = queue.idleCheck
        clock.advance(by: .seconds(1))
        await check?.value
        #expect(idleCalls.withLock { $0 } == 1)
    }

    /// Each idle spell schedules a check; a new one ends the last, which a job
    /// has run since: one task asleep at most, however often the queue drains.
    @Test func aNewIdleCheckEndsTheLastOne() async throws {
        let (queue, clock, idleCalls) = try queueWentIdle()
        defer { queue.shutdown() }
        let first = queue.idleCheck
        #expect(first != nil)
        for _ in 0..<3 {
            let done = DispatchSemaphore(value: 0)
            try queue.submit(cost: 1) { done.signal() }
            done.wait()
            #expect(waitUntil { queue.idleCheck != first && queue.statistics.active == 0 })
        }
        // Bounded: were the earlier checks left asleep, this would time out, not hang.
        #expect(waitUntil { clock.sleepers == 1 }, "only the last check sleeps")
        clock.advance(by: .seconds(1))
        #expect(waitUntil { idleCalls.withLock { $0 } == 1 && clock.sleepers == 0 })
    }

    /// `shutdown` ends a check still asleep on a clock nobody will move: no
    /// task outlives the queue (LeakSanitizer counts one at exit), and the
    /// hook never runs for a queue that is gone; a job ending after it
    /// schedules none.
    @Test func shutdownEndsAPendingIdleCheckWithoutRunningTheHook() async throws {
        let (queue, clock, idleCalls) = try queueWentIdle()
        let check = queue.idleCheck
        let gate = Gate()
        try gate.hold(queue)   // a job still running when the queue shuts down
        queue.shutdown()
        await check?.value
        #expect(clock.sleepers == 0, "the check ended without the clock moving")
        gate.open()
        #expect(waitUntil { queue.statistics.active == 0 })
        usleep(50_000)   // a window for a check that must not be scheduled
        #expect(clock.sleepers == 0 && queue.idleCheck == check)
        clock.advance(by: .seconds(5))
        #expect(idleCalls.withLock { $0 } == 0)
    }
}
