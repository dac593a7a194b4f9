import CThumbSys
import Foundation
import Synchronization
import ThumbClock
import ThumbRender

/// The bounded pool of render workers (Configuration.md `workers`, `maxQueue`,
/// `limits.maxDecodeMemoryBytes`). Decoding never runs on the socket threads:
/// every render is a job here.
///
/// Admission is by count and by memory: a job waits while the estimated memory
/// of the renders running plus its own would exceed the budget, so a storm of
/// huge PNGs queues instead of exhausting memory. Jobs start in order, with one
/// exception: while the head waits for a *large* render to finish (one costing
/// over 1/16 of the budget), a small job that fits the memory left may pass it
/// on an idle worker — a 300 px thumbnail need not wait 15 s behind 4096²
/// renders. Once no large render runs, nothing passes, so the head waits at
/// most for the small jobs already running and never starves.
/// Prefetch jobs run only when no live job waits, and have their own queue, so
/// they can never make a live request get a 503.
///
/// A job whose decode can use threads (a HEIC grid's tiles, `tileThreads`)
/// is lent the workers idle when it starts, up to what it asked for: they take
/// no job until it ends, so a lone cold request decodes on several cores and a
/// busy queue lends nothing (Isolation.md § Worker processes). The rest of a
/// render (`ahead`), queued by its first job as that job ends, counts that
/// job's worker as idle: a cold HEIC grid's decode, planned by the first job,
/// gets it too.
///
/// Facts jobs (`/info`'s probes and canonical decodes) go ahead of every render
/// waiting at their priority — a list lays its rows out from the facts before
/// any thumbnail can show (issue 38) — and hold at most half the workers (at
/// least one): past that, a render waiting behind them starts on a free worker,
/// so a `POST /info` of a thousand heavy sources cannot keep a live thumbnail
/// waiting until the batch answers (issue 34). Each priority so has two lines,
/// facts and renders, each in its own order.
public final class RenderQueue: Sendable {
    public enum Priority: Sendable { case live, prefetch }
    /// What a job computes: a render, or an original's facts (capped at half the workers).
    public enum Kind: Sendable { case render, facts }

    /// Figures for `/stats` (`render.active`, `render.queued`); the service
    /// counts `render.rejected`, since only it knows a live request was refused.
    public struct Statistics: Equatable, Sendable {
        public var active = 0
        public var queued = 0
        /// Estimated bytes of the renders running now.
        public var memoryInUse = 0
    }

    /// The most renders, and estimated bytes, that ran at once since the
    /// queue started: how close a storm came to `workers` and
    /// `limits.maxDecodeMemoryBytes`. Kept where jobs start, so a render too
    /// short for any poll of `statistics` to see still counts.
    public struct Peaks: Equatable, Sendable {
        public var active = 0
        public var memoryInUse = 0
    }

    private struct Job {
        let id: Int
        let cost: Int
        let kind: Kind
        /// Threads the job could use; it gets as many as workers are idle, itself included.
        let tileThreads: Int
        let work: @Sendable (_ tileThreads: Int) -> Void
        /// A facts job moved forward by `hurry`: those keep their order among themselves.
        var hurried = false
    }

    private struct State {
        var live = FIFO<Job>()
        var prefetch = FIFO<Job>()
        /// Facts jobs, ahead of the renders of their priority (`live`, `prefetch`).
        var liveFacts = FIFO<Job>()
        var prefetchFacts = FIFO<Job>()
        var nextID = 0
        var active = 0
        /// Idle workers lent to running jobs as tile threads: they take no job meanwhile.
        var lent = 0
        /// The job each worker thread runs now, by thread.
        var workerJobs: [pthread_t: Int] = [:]
        /// Running jobs that queued the rest of their render (`ahead`) and are about to
        /// end: their workers may be lent to that rest, which would otherwise start
        /// beside them, see no idle worker and decode a cold HEIC grid on one thread.
        var handingOver: Set<Int> = []
        /// Facts jobs running now (at most `maxFacts`).
        var factsActive = 0
        var memoryInUse = 0
        /// Bytes held outside jobs (`hold`), and the holds waiting for room.
        var held = 0
        var waitingHolds = FIFO<(bytes: Int, then: @Sendable (MemoryHold) -> Void)>()
        var peaks = Peaks()
        /// Ids of running jobs that were over `smallCost` when they started (the
        /// budget may change on reload): while any runs, small jobs may pass a waiting head.
        var largeRunning: Set<Int> = []
        /// Start times of the running jobs on the queue's clock, by id: the watchdog's view.
        var running: [Int: AnyClock.Instant] = [:]
        var maxQueue: Int
        var maxPrefetch: Int
        var memoryBudget: Int
        /// Bytes of the budget set aside for what the engine's worker processes
        /// hold beside their jobs (`RenderEngine.workerBaseBytes` × workers).
        let reserved: Int
        var stopping = false
        /// Jobs started so far: an idle check that sees it unchanged knows
        /// nothing ran in between.
        var started = 0
        /// The last idle check scheduled: sleeping out `idleDelay` on the
        /// queue's clock, or done. Tests await it after moving their clock.
        var idleCheck: Task<Void, Never>?

        /// What the jobs and holds may use together: the budget less the workers' bases.
        var jobBudget: Int { max(0, memoryBudget - reserved) }

        /// The most a job may cost and still pass a head that waits for memory.
        var smallCost: Int { jobBudget / 16 }
    }

    private let state: Mutex<State>
    private let wake = NSCondition()
    public let workerCount: Int
    /// The most facts jobs that run at once: half the workers, at least one.
    let maxFacts: Int
    /// Ages jobs and times the idle delay; injected so tests age a job or
    /// pass the delay by moving a manual clock, without waiting.
    private let clock: AnyClock
    private let whenIdle: (@Sendable () -> Void)?
    private let idleDelay: Duration

    /// `workers` 0 means one per CPU. `whenIdle` runs (in a task) once the
    /// queue has stayed empty with no job running for `idleDelay` on `clock`
    /// after its last job: the service gives freed heap back to the system
    /// there, when no render can need it again soon. `reservedPerWorker`:
    /// what each worker process holds beside its job, counted against
    /// `memoryBudget` for good (`RenderEngine.workerBaseBytes`).
    /// The threads `workers` means: 0 is one per CPU.
    public static func workerCount(_ workers: Int) -> Int {
        workers > 0 ? workers : max(1, ProcessInfo.processInfo.activeProcessorCount)
    }

    public init<C: Clock>(workers: Int, maxQueue: Int, memoryBudget: Int, reservedPerWorker: Int = 0,
                          maxPrefetch: Int = 10_000, clock: C = ContinuousClock(), idleDelay: Duration = .seconds(1),
                          whenIdle: (@Sendable () -> Void)? = nil) where C.Duration == Duration {
        self.clock = AnyClock(clock)
        self.whenIdle = whenIdle
        self.idleDelay = idleDelay
        workerCount = Self.workerCount(workers)
        maxFacts = max(1, workerCount / 2)
        state = Mutex(State(maxQueue: maxQueue, maxPrefetch: maxPrefetch, memoryBudget: memoryBudget,
                            reserved: workerCount * reservedPerWorker))
        for n in 0..<workerCount {
            // Foundation's Thread.name does not reach the kernel on Linux, so
            // top, perf and /proc would show the creating thread's name: the
            // worker names itself (15 bytes at most, the kernel's limit).
            let name = n < 10 ? "thumbd-render-\(n)" : "thumbd-rend-\(n)"
            let thread = Thread { [self] in
                thumbd_name_this_thread(name)
                self.runWorker()
            }
            thread.start()
        }
    }

    /// Queues `work`, which will run on a worker once its estimated `cost` in
    /// bytes fits the memory budget. Throws `.overloaded` when the queue is
    /// full and `.imageTooLarge` when `cost` alone exceeds the whole budget.
    /// Returns the job's id, for `promote(_:)`.
    ///
    /// `ahead`: the job is the rest of a render that already ran here (its
    /// header probe showed its decode needs more memory than the probe was
    /// admitted with): it goes first in its queue, ahead of new work, and
    /// `maxQueue` does not apply, since the render was admitted already.
    @discardableResult
    public func submit(cost: Int, priority: Priority = .live, kind: Kind = .render, ahead: Bool = false,
                       _ work: @escaping @Sendable () -> Void) throws(ServiceError) -> Int {
        try submit(cost: cost, priority: priority, kind: kind, ahead: ahead, tileThreads: 1) { _ in work() }
    }

    /// `submit`, for a job that can decode on up to `tileThreads` threads:
    /// `work` is told how many it got (1 when no other worker was idle).
    @discardableResult
    public func submit(cost: Int, priority: Priority = .live, kind: Kind = .render, ahead: Bool = false,
                       tileThreads: Int, _ work: @escaping @Sendable (_ tileThreads: Int) -> Void) throws(ServiceError) -> Int {
        let result: Result<Int, ServiceError> = state.withLock { s in
            if cost > s.jobBudget {
                let budget = s.reserved == 0 ? "maxDecodeMemoryBytes \(s.memoryBudget)"
                    : "the \(s.jobBudget) bytes maxDecodeMemoryBytes \(s.memoryBudget) leaves beside its workers' "
                      + "bases (\(s.reserved))"
                return .failure(.imageTooLarge("decoding needs about \(cost) bytes, over \(budget)"))
            }
            s.nextID += 1
            let job = Job(id: s.nextID, cost: cost, kind: kind, tileThreads: max(1, tileThreads), work: work)
            let isFacts = kind == .facts
            // The rest of a render, queued by its first job as that job ends: the worker it
            // runs on is as good as idle to the rest.
            if ahead, let current = s.workerJobs[pthread_self()] { s.handingOver.insert(current) }
            switch (priority, ahead) {
            case (.live, true): isFacts ? s.liveFacts.prepend(job) : s.live.prepend(job)
            case (.prefetch, true): isFacts ? s.prefetchFacts.prepend(job) : s.prefetch.prepend(job)
            case (.live, false):
                guard s.live.count + s.liveFacts.count < s.maxQueue else { return .failure(.overloaded) }
                isFacts ? s.liveFacts.append(job) : s.live.append(job)
            case (.prefetch, false):
                guard s.prefetch.count + s.prefetchFacts.count < s.maxPrefetch else { return .failure(.overloaded) }
                isFacts ? s.prefetchFacts.append(job) : s.prefetch.append(job)
            }
            return .success(job.id)
        }
        let id = try result.get()
        wakeWorkers()
        return id
    }

    /// Moves a waiting prefetch job to the back of the live queue: a live
    /// request joined it and must not wait behind live traffic's gaps. It was
    /// admitted already, so `maxQueue` does not apply.
    public func promote(_ id: Int) {
        let moved = state.withLock { s in
            if let job = s.prefetch.remove(where: { $0.id == id }) {
                s.live.append(job)
            } else if var job = s.prefetchFacts.remove(where: { $0.id == id }) {
                job.hurried = false   // a new line: moved forward in it only by a `hurry` of its own
                s.liveFacts.append(job)
            } else {
                return false
            }
            return true
        }
        if moved { wakeWorkers() }
    }

    /// Moves a waiting facts job forward in its line (live or prefetch),
    /// behind those moved before it: a render of its source is starting, so
    /// the source is on someone's screen, and its facts must not wait behind
    /// those of rows only prefetched (issue 38). Nothing when it started already.
    public func hurry(_ id: Int) {
        state.withLock { s in
            func move(_ line: inout FIFO<Job>) -> Bool {
                guard var job = line.remove(where: { $0.id == id && !$0.hurried }) else { return false }
                job.hurried = true
                line.insert(job, beforeFirst: { !$0.hurried })
                return true
            }
            _ = move(&s.liveFacts) || move(&s.prefetchFacts)
        }
    }

    /// Takes a job out of the queue before it starts, and says whether it
    /// did: a render of the same source that will compute the facts anyway
    /// withdraws a facts job still waiting (one job serves both).
    public func withdraw(_ id: Int) -> Bool {
        state.withLock { s in
            s.liveFacts.remove(where: { $0.id == id }) != nil || s.prefetchFacts.remove(where: { $0.id == id }) != nil
        }
    }

    /// How long the longest-running job has been running, nil when none runs.
    /// A worker stuck in one job shows here however busy the others are.
    public var oldestRunning: Duration? {
        guard let oldest = state.withLock({ $0.running.values.min() }) else { return nil }
        return max(.zero, oldest.duration(to: clock.now))
    }

    /// The last idle check scheduled (nil before the first).
    var idleCheck: Task<Void, Never>? { state.withLock { $0.idleCheck } }

    private func wakeWorkers() {
        wake.lock()
        wake.broadcast()
        wake.unlock()
    }

    /// New limits on reload; jobs already queued stay queued.
    public func update(maxQueue: Int, memoryBudget: Int) {
        state.withLock { s in
            s.maxQueue = maxQueue
            s.memoryBudget = memoryBudget
        }
        wakeWorkers()
    }

    /// Lets the workers exit once the queues are empty (tests; the daemon's
    /// workers live as long as the process), and ends a pending idle check,
    /// which would otherwise sleep on a manual clock nobody moves any more.
    public func shutdown() {
        let check = state.withLock { s in
            s.stopping = true
            return s.idleCheck
        }
        check?.cancel()
        wakeWorkers()
    }

    public var statistics: Statistics {
        state.withLock { s in
            Statistics(active: s.active, queued: s.live.count + s.prefetch.count + s.liveFacts.count + s.prefetchFacts.count,
                       memoryInUse: s.memoryInUse)
        }
    }

    public var peaks: Peaks { state.withLock { $0.peaks } }

    /// The next job that may start now, marked running, with the threads it
    /// was lent; nil if none may (a worker lent to a running job takes none).
    private func takeJob() -> (Job, tileThreads: Int)? {
        state.withLock { s in
            guard s.active + s.lent < workerCount else { return nil }
            // Read once: `fits` also runs while a queue of `s` is being changed.
            let (idle, committed, jobBudget) = (s.active == 0, s.memoryInUse + s.held, s.jobBudget)
            func fits(_ job: Job) -> Bool { idle || committed + job.cost <= jobBudget }
            let factsFull = s.factsActive >= maxFacts
            let (smallCost, room, largeRunning) = (s.smallCost, s.jobBudget - s.memoryInUse - s.held, !s.largeRunning.isEmpty)
            /// One priority's next job: its first facts job while their share allows, else its
            /// first render, taken when it fits; while a large render runs, a small job that fits
            /// the memory left may pass a head that does not.
            func next(_ facts: inout FIFO<Job>, _ renders: inout FIFO<Job>) -> Job? {
                let factsHead = factsFull ? nil : facts.first
                guard let head = factsHead ?? renders.first else { return nil }
                if fits(head) { return factsHead != nil ? facts.popFirst() : renders.popFirst() }
                guard largeRunning else { return nil }
                let small: (Job) -> Bool = { $0.cost <= smallCost && $0.cost <= room }
                return (factsFull ? nil : facts.remove(where: small)) ?? renders.remove(where: small)
            }
            var job: Job?
            if !s.live.isEmpty || !s.liveFacts.isEmpty {
                job = next(&s.liveFacts, &s.live)
            } else {
                job = next(&s.prefetchFacts, &s.prefetch)
            }
            guard let job else { return nil }
            // The workers idle besides this one, and those whose job is handing over to
            // this one, up to what the job can use; a handed-over worker is lent once.
            let tileThreads = min(job.tileThreads, workerCount - s.active - s.lent + s.handingOver.count)
            for _ in 0..<min(tileThreads - 1, s.handingOver.count) { s.handingOver.removeFirst() }
            s.workerJobs[pthread_self()] = job.id
            do {
                s.lent += tileThreads - 1
                s.started += 1
                s.active += 1
                s.memoryInUse += job.cost
                s.peaks.active = max(s.peaks.active, s.active)
                s.peaks.memoryInUse = max(s.peaks.memoryInUse, s.memoryInUse)
                if job.cost > s.smallCost { s.largeRunning.insert(job.id) }
                if job.kind == .facts { s.factsActive += 1 }
                s.running[job.id] = clock.now
            }
            return (job, tileThreads)
        }
    }

    private func runWorker() {
        while true {
            wake.lock()
            var job = takeJob()
            while job == nil {
                if state.withLock({ $0.stopping }) {
                    wake.unlock()
                    return
                }
                wake.wait()
                job = takeJob()
            }
            wake.unlock()
            guard let (job, tileThreads) = job.map({ ($0.0, $0.tileThreads) }) else { continue }
            job.work(tileThreads)
            let (idleSince, granted): (Int?, [Granted]) = state.withLock { s in
                s.active -= 1
                s.lent -= tileThreads - 1
                s.workerJobs[pthread_self()] = nil
                s.handingOver.remove(job.id)
                s.memoryInUse -= job.cost
                s.largeRunning.remove(job.id)
                if job.kind == .facts { s.factsActive -= 1 }
                s.running[job.id] = nil
                let empty = s.live.isEmpty && s.prefetch.isEmpty && s.liveFacts.isEmpty && s.prefetchFacts.isEmpty
                return (s.active == 0 && empty ? s.started : nil, grantHolds(&s))
            }
            for (hold, then) in granted { then(hold) }
            // Freed memory may let a waiting job start on another worker.
            wakeWorkers()
            if let idleSince { scheduleIdleCheck(startedWhenIdle: idleSince) }
        }
    }

    /// Runs `whenIdle` after `idleDelay` unless a job started meanwhile (a
    /// storm keeps its freed memory for the next render; it is released once
    /// the storm is over).
    private func scheduleIdleCheck(startedWhenIdle: Int) {
        guard let whenIdle else { return }
        // Made under the lock, so `idleCheck` names it before it can sleep.
        state.withLock { s in
            guard !s.stopping else { return }
            // A new idle spell supersedes the last check, which a job has run since and so
            // would find nothing to do: ended now, not left asleep on a clock nobody moves.
            s.idleCheck?.cancel()
            s.idleCheck = Task.detached(priority: .utility) { [self, clock, idleDelay] in
                do { try await clock.sleep(for: idleDelay) } catch { return }   // cancelled: by `shutdown`, or a newer check
                let stillIdle = state.withLock { $0.started == startedWhenIdle && $0.active == 0 }
                if stillIdle { whenIdle() }
            }
        }
    }

    // MARK: Memory held outside jobs

    private typealias Granted = (MemoryHold, @Sendable (MemoryHold) -> Void)

    /// Holds `bytes` of the memory budget outside any job — a download kept
    /// in memory because no disk could take it (SourcesAndLimits.md
    /// § Downloads) — until the returned hold is released (or dropped).
    /// `then` runs once they fit beside the renders running and the bytes
    /// held already, at once when nothing runs or is held (so a hold larger
    /// than what is free never waits for ever), on this thread or the one
    /// that freed the room. Holds are granted in order; renders wait for
    /// held bytes as for each other's.
    public func hold(_ bytes: Int, then: @escaping @Sendable (MemoryHold) -> Void) {
        let granted: [Granted] = state.withLock { s in
            s.waitingHolds.append((bytes, then))
            return grantHolds(&s)
        }
        for (hold, then) in granted { then(hold) }
    }

    /// What jobs and holds may use now: `limits.maxDecodeMemoryBytes` less the workers' bases.
    var memoryBudget: Int { state.withLock { $0.jobBudget } }

    /// Bytes held outside jobs now, and how many holds wait for room.
    var holds: (bytes: Int, waiting: Int) {
        state.withLock { s in (s.held, s.waitingHolds.count) }
    }

    /// Grants the waiting holds that fit, in order (under the lock; the
    /// caller runs them after it).
    private func grantHolds(_ s: inout State) -> [Granted] {
        var granted: [Granted] = []
        while let head = s.waitingHolds.first,
              (s.held == 0 && s.active == 0) || s.held + s.memoryInUse + head.bytes <= s.jobBudget {
            _ = s.waitingHolds.popFirst()
            s.held += head.bytes
            granted.append((MemoryHold(bytes: head.bytes, queue: self), head.then))
        }
        return granted
    }

    fileprivate func release(_ bytes: Int) {
        let granted: [Granted] = state.withLock { s in
            s.held -= bytes
            return grantHolds(&s)
        }
        wakeWorkers()
        for (hold, then) in granted { then(hold) }
    }
}

/// Bytes of `limits.maxDecodeMemoryBytes` held outside render jobs
/// (`RenderQueue.hold`): given back once, by `release()` or when the last
/// reference goes.
public final class MemoryHold: Sendable {
    public let bytes: Int
    private let queue: RenderQueue
    private let released = Atomic<Bool>(false)

    fileprivate init(bytes: Int, queue: RenderQueue) {
        self.bytes = bytes
        self.queue = queue
    }

    deinit { release() }

    public func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        queue.release(bytes)
    }
}
