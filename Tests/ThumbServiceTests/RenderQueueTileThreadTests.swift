import Foundation
import Synchronization
import Testing
@testable import ThumbService
import ThumbTestSupport

/// A job whose decode can use threads (a HEIC grid's tiles) is lent the
/// workers idle when it starts (and the worker of the job that queued it as
/// the rest of its render), up to what it asks for; lent workers take no job
/// until it ends, and a busy queue lends nothing.
@Suite struct RenderQueueTileThreadTests {
    /// Submits a job asking for `threads` that records what it got and
    /// blocks on `gate`; waits until it runs.
    private func start(_ queue: RenderQueue, threads: Int, gate: DispatchSemaphore, got: Granted) throws {
        let started = got.all.count
        try queue.submit(cost: 1, tileThreads: threads) { n in
            got.add(n)
            gate.wait()
        }
        #expect(eventually(10) { got.all.count == started + 1 })
    }

    @Test func anIdleQueueLendsItsIdleWorkersAndTakesNothingMeanwhile() throws {
        let queue = RenderQueue(workers: 3, maxQueue: 10, memoryBudget: 1 << 30)
        defer { queue.shutdown() }
        let gate = DispatchSemaphore(value: 0)
        let got = Granted()
        try start(queue, threads: 4, gate: gate, got: got)
        #expect(got.all == [3], "3 workers: the job's own and the 2 idle ones, not the 4 it asked for")
        // The lent workers take no job while it runs: a plain job waits.
        let ran = DispatchSemaphore(value: 0)
        try queue.submit(cost: 1) { ran.signal() }
        #expect(ran.wait(timeout: .now() + 0.3) == .timedOut)
        #expect(queue.statistics.active == 1 && queue.statistics.queued == 1)
        gate.signal()
        #expect(ran.wait(timeout: .now() + 10) == .success)
        #expect(eventually(10) { queue.statistics == .init() })
    }

    @Test func aBusyQueueLendsOnlyWhatIsIdleAndAPlainJobGetsOne() throws {
        let queue = RenderQueue(workers: 3, maxQueue: 10, memoryBudget: 1 << 30)
        defer { queue.shutdown() }
        let gate = DispatchSemaphore(value: 0)
        let got = Granted()
        try start(queue, threads: 1, gate: gate, got: got)      // a plain job holds one worker
        try start(queue, threads: 4, gate: gate, got: got)      // then one that could use 4
        #expect(got.all == [1, 2], "the second got itself and the one idle worker")
        // Every worker busy or lent: a third job asking for threads waits, then gets what is idle.
        let third = DispatchSemaphore(value: 0)
        try queue.submit(cost: 1, tileThreads: 4) { n in got.add(n); third.signal() }
        #expect(third.wait(timeout: .now() + 0.3) == .timedOut)
        gate.signal(2)
        #expect(third.wait(timeout: .now() + 10) == .success)
        #expect(got.all.count == 3 && got.all[2] >= 1 && got.all[2] <= 3)
        #expect(eventually(10) { queue.statistics == .init() })
    }

    /// A cold render's first job (the probe) queues the rest (`ahead`) as it
    /// ends: the rest is lent that job's worker too, though another worker
    /// takes it before the first job has returned.
    @Test func theRestOfARenderIsLentTheWorkerOfTheJobThatQueuedIt() throws {
        let queue = RenderQueue(workers: 2, maxQueue: 10, memoryBudget: 1 << 30)
        defer { queue.shutdown() }
        let got = Granted()
        let gate = DispatchSemaphore(value: 0)
        let firstDone = DispatchSemaphore(value: 0)
        try queue.submit(cost: 1) {
            do {
                try queue.submit(cost: 1, ahead: true, tileThreads: 4) { n in
                    got.add(n)
                    gate.wait()
                }
            } catch {
                Issue.record("the rest was refused: \(error)")
            }
            // The other worker starts the rest while this job is still returning.
            _ = eventually(10) { got.all.count == 1 }
            firstDone.signal()
        }
        #expect(firstDone.wait(timeout: .now() + 10) == .success)
        #expect(got.all == [2], "both workers: the idle one and the one whose job queued it")
        // Its worker, lent now, takes no job until the rest ends.
        let ran = DispatchSemaphore(value: 0)
        try queue.submit(cost: 1) { ran.signal() }
        #expect(ran.wait(timeout: .now() + 0.3) == .timedOut)
        gate.signal()
        #expect(ran.wait(timeout: .now() + 10) == .success)
        #expect(eventually(10) { queue.statistics == .init() })
    }
}

/// The threads each job was told it got, in the order they started.
private final class Granted: Sendable {
    private let state = Mutex<[Int]>([])
    func add(_ n: Int) { state.withLock { $0.append(n) } }
    var all: [Int] { state.withLock { $0 } }
}

private extension DispatchSemaphore {
    func signal(_ n: Int) { for _ in 0..<n { signal() } }
}
