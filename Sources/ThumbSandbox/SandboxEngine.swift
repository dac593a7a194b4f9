import Foundation
import Synchronization
import ThumbCodec
import ThumbImaging
import ThumbRender

/// The daemon's engine (SPEC §16, Isolation.md): every probe, decode, scale,
/// compose and encode runs in a worker process spawned from the thumbd
/// binary, one job at a time per worker. The render-queue thread that runs a
/// job waits for its worker's answer; past the job's deadline the worker is
/// killed and replaced, and a worker that dies answers its job
/// `workerCrashed`. Idle workers wait in a pool; at most one per render
/// thread is ever busy, so the pool never holds more than `workers` of them.
public final class SandboxEngine: RenderEngine {
    /// What a worker may map besides its job's admitted memory (its
    /// `RLIMIT_DATA` is that plus this): the Swift runtime, the libraries'
    /// data and tables, its threads' stacks, the freed heap it keeps. Address
    /// space, not resident memory: it stops a runaway, and is not what the
    /// budget counts (`workerBaseBytes`; Isolation.md § Memory).
    public static let baseMemoryBytes = 256 << 20
    /// Freed heap a worker may keep for its next job beyond what that job was
    /// admitted with: more goes back to the kernel before the job decodes
    /// (`FreedHeap`), so a small job after a large one holds no more than is
    /// counted, while a run of like jobs reuses their buffers without faulting
    /// them in again (trimming after every job doubled the worker CPU of a
    /// 12 MP progressive JPEG to 256 px: Isolation.md § Memory).
    public static let keptHeapBytes = 16 << 20
    /// Resident memory of a worker of its own, beside any job: measured 4 MiB
    /// anonymous idle (its binary's and libraries' code is the daemon's pages,
    /// counted once), 8 with a margin (Isolation.md § Memory).
    public static let ownResidentBytes = 8 << 20
    /// Grace past the deadline before the kill: a worker that noticed the
    /// deadline itself answers `renderTimedOut` in that time and is kept.
    static let killGrace = Duration.milliseconds(50)

    let executable: String
    private let pool: WorkerPool
    /// Whom a root daemon's workers run as (`sandbox.user`); follows reloads.
    private let identity: Mutex<WorkerIdentity?>
    /// Where the workers' output lines go (the daemon's log).
    private let log = Mutex<@Sendable (String) -> Void>(SandboxEngine.standardError)
    private let killed = Atomic<Int>(0)
    private let crashed = Atomic<Int>(0)
    private let spawned = Atomic<Int>(0)

    /// `executable`: the thumbd binary to start workers from
    /// (`WorkerExecutable.resolve()`); `maxIdle`: the render threads' count,
    /// which is also the most worker processes that exist at once;
    /// `identity`: whom the workers of a root daemon run as (nil: `nobody`).
    public init(executable: String, maxIdle: Int, identity: WorkerIdentity? = nil) {
        self.executable = executable
        pool = WorkerPool(capacity: maxIdle)
        self.identity = Mutex(identity)
    }

    /// `sandbox.user` re-read (a reload): workers started from now on run as `identity`.
    public func update(identity: WorkerIdentity?) {
        self.identity.withLock { $0 = identity }
    }

    /// Where each line a worker writes goes, prefixed with its pid (at most
    /// 20 lines and 4 KiB a job: `WorkerOutput`).
    public func setLog(_ log: @escaping @Sendable (String) -> Void) {
        self.log.withLock { $0 = log }
    }

    private static let standardError: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data("thumbd \(line)\n".utf8))
    }

    /// Each worker's own memory and the freed heap it keeps: the render
    /// queue sets this aside once per worker (SPEC §16).
    public var workerBaseBytes: Int { Self.ownResidentBytes + Self.keptHeapBytes }

    public var counts: EngineCounts {
        EngineCounts(killed: killed.load(ordering: .relaxed), crashed: crashed.load(ordering: .relaxed),
                     spawned: spawned.load(ordering: .relaxed))
    }

    /// Ends every idle worker (a stopping daemon; busy ones end as their jobs return).
    public func shutdown() {
        for worker in pool.takeIdle() { worker.end() }
    }

    deinit { shutdown() }

    // MARK: RenderEngine

    public func plan(_ original: OriginalFile, variant: PreparedVariant, limits: PipelineLimits,
                     budget: JobBudget) throws(RenderError) -> RenderPlan {
        let (reply, _) = try run(.plan(variant: variant, limits: limits), original: original, budget: budget)
        guard case .plan(let plan) = reply else { throw unexpected(reply) }
        return plan
    }

    public func planAndRender(_ original: OriginalFile, variant: PreparedVariant, limits: PipelineLimits,
                              focus: FocalPoint?, encoding: EncodingSpec,
                              budget: JobBudget) throws(RenderError) -> PlannedRender {
        let (reply, fds) = try run(.planAndRender(variant: variant, limits: limits, focus: focus, encoding: encoding,
                                                  admittedBytes: budget.admittedBytes),
                                   original: original, budget: budget)
        if case .plan(let plan) = reply { return .needsMore(plan) }
        return .rendered(try output(reply, fds, maxSide: limits.maxOutputDimension,
                                    maxFrames: encoding.animation?.maxAnimationFrames ?? 1, encoding: encoding))
    }

    public func render(_ original: OriginalFile, plan: RenderPlan, factsSHA256: String?, encoding: EncodingSpec,
                       budget: JobBudget) throws(RenderError) -> RenderOutput {
        let (reply, fds) = try run(.render(plan: plan, factsSHA256: factsSHA256, encoding: encoding),
                                   original: original, budget: budget)
        return try output(reply, fds, maxSide: max(plan.geometry.width, plan.geometry.height),
                          maxFrames: encoding.animation?.maxAnimationFrames ?? 1, encoding: encoding)
    }

    /// A render's answer, checked: its bitmap is no larger than the result
    /// may be, and a `q=auto` choice is one the job asked for, of the format
    /// it answered, on this release's table, in 1…100.
    private func output(_ reply: WorkerReply, _ fds: [OwnedFileDescriptor], maxSide: Int,
                        maxFrames: Int, encoding: EncodingSpec) throws(RenderError) -> RenderOutput {
        guard case .rendered(let bw, let bh, let facts, let format, let width, let height, let frames,
                             let fromAnimation, let choice) = reply, fds.count == 2,
              bw > 0, bh > 0, bw <= maxSide, bh <= maxSide, frames >= 1, frames <= maxFrames,
              choice.map({ $0.target == encoding.autoQualityTarget && $0.format == format && $0.format.usesQuality
                      && $0.table == AutoQuality.qualityTableVersion && (1...100).contains($0.q) }) ?? true
        else { throw unexpected(reply) }
        // Each memfd is closed once read: its pages go before the next result's are copied.
        let pixels = try read(fds[0], maxBytes: bw * bh * 4)
        fds[0].close()
        guard pixels.count == bw * bh * 4 else { throw unexpected(reply) }
        let bytes = try read(fds[1], maxBytes: Self.maxEncodedBytes(width: width, height: height) * frames)
        fds[1].close()
        return RenderOutput(bitmap: Bitmap(width: bw, height: bh, pixels: pixels), facts: facts,
                            encoded: EncodedThumbnail(bytes: bytes, format: format, width: width, height: height,
                                                      frames: frames),
                            fromAnimation: fromAnimation, autoQuality: choice)
    }

    public func encode(_ bitmap: Bitmap, encoding: EncodingSpec,
                       budget: JobBudget) throws(RenderError) -> EncodedThumbnail {
        let memory: OwnedFileDescriptor
        do {
            memory = try SharedMemory.sealed(name: "thumbd-bitmap", bytes: bitmap.pixels)
        } catch {
            throw .internalError("sharing a bitmap with a worker failed: \(error)")
        }
        // Open until the job is sent: an optimized build ends an object's life at its last use.
        let (reply, fds) = try withExtendedLifetime(memory) { () throws(RenderError) in
            try run(.encode(width: bitmap.width, height: bitmap.height, encoding: encoding),
                    descriptor: memory.rawValue, offset: 0, length: bitmap.byteCount, budget: budget)
        }
        guard case .encoded(let format, let width, let height) = reply, fds.count == 1,
              width == bitmap.width, height == bitmap.height else { throw unexpected(reply) }
        let bytes = try read(fds[0], maxBytes: Self.maxEncodedBytes(width: width, height: height))
        fds[0].close()
        return EncodedThumbnail(bytes: bytes, format: format, width: width, height: height)
    }

    public func probe(_ original: OriginalFile, limits: PipelineLimits,
                      budget: JobBudget) throws(RenderError) -> ImageHeader {
        let (reply, _) = try run(.probe(limits: limits), original: original, budget: budget)
        guard case .header(let header) = reply else { throw unexpected(reply) }
        return header
    }

    public func facts(_ original: OriginalFile, header: ImageHeader, sha256: String,
                      budget: JobBudget) throws(RenderError) -> OriginalFacts {
        let (reply, _) = try run(.facts(header: header, sha256: sha256), original: original, budget: budget)
        guard case .facts(let facts) = reply else { throw unexpected(reply) }
        return facts
    }

    // MARK: Jobs

    /// An encoded rendition is never larger than its raw pixels plus the
    /// containers' overhead (PNG's worst case is a few bytes a row).
    static func maxEncodedBytes(width: Int, height: Int) -> Int {
        width * height * 5 + (1 << 20)
    }

    private func run(_ job: WorkerRequest.Job, original: OriginalFile,
                     budget: JobBudget) throws(RenderError) -> (WorkerReply, [OwnedFileDescriptor]) {
        let span = original.span
        return try withExtendedLifetime(original) { () throws(RenderError) in
            try run(job, descriptor: span.descriptor, offset: span.offset, length: original.length, budget: budget)
        }
    }

    /// One job on one worker: a pooled one, or a new one when none waits.
    /// A worker found dead when its job is sent (it died idle) is replaced
    /// once; the job itself is never sent twice.
    private func run(_ job: WorkerRequest.Job, descriptor: Int32?, offset: Int, length: Int,
                     budget: JobBudget) throws(RenderError) -> (WorkerReply, [OwnedFileDescriptor]) {
        let time = budget.deadline.remaining
        guard time > .zero else { throw .renderTimedOut }
        let request = WorkerRequest(job: job, originalOffset: offset, originalLength: length, time: time,
                                    admittedBytes: budget.admittedBytes, tileThreads: budget.tileThreads)
        let frame: [UInt8]
        do {
            frame = try WorkerWire.encode(request)
        } catch {
            throw .internalError("a job that could not be written: \(error)")
        }
        var worker = try pool.checkOut { () throws(RenderError) in try spawn() }
        do {
            try worker.start(frame, descriptor: descriptor, memoryCap: Self.cap(budget))
        } catch {
            worker.end()
            worker = try pool.checkOut { () throws(RenderError) in try spawn() }
            do {
                try worker.start(frame, descriptor: descriptor, memoryCap: Self.cap(budget))
            } catch {
                worker.end()
                throw .internalError("a new worker refused its first job: \(error)")
            }
        }
        // From when the job is on a worker, as the worker counts it: starting a replacement
        // after a kill (or waiting for one) is not the job's time.
        switch worker.finish(timeout: time + Self.killGrace) {
        case .answered(let reply, let fds):
            keep(worker)
            if case .failed(let error) = reply { throw error }
            return (reply, fds)
        case .hung:
            killed.add(1, ordering: .relaxed)
            prewarm()
            throw .renderTimedOut
        case .died(let description):
            crashed.add(1, ordering: .relaxed)
            prewarm()
            throw .workerCrashed("the decoding worker \(description)")
        case .filtered(let description):
            crashed.add(1, ordering: .relaxed)
            prewarm()
            throw .workerFiltered("the decoding worker \(description)")
        case .outOfMemory(let said):
            prewarm()
            throw .outOfMemory("the render needed more memory than the \(budget.admittedBytes) bytes it was "
                               + "admitted with (the worker said: \(said))")
        case .broken(let description):
            throw .internalError("a worker's answer could not be read: \(description)")
        }
    }

    private static func cap(_ budget: JobBudget) -> Int? {
        WorkerProcess.memoryCapSupported ? budget.admittedBytes + baseMemoryBytes : nil
    }

    /// Back into the pool, or ended when the pool is full.
    private func keep(_ worker: Worker) {
        if !pool.keep(worker) { worker.end() }
    }

    /// The idle workers' process ids (tests: what a worker keeps between jobs).
    var idleWorkerPIDs: [pid_t] { pool.idlePIDs }

    /// A new worker in a slot the pool has reserved (given back when it is reaped or fails to start).
    private func spawn() throws(RenderError) -> Worker {
        let identity: WorkerIdentity?
        do {
            identity = try workerIdentity()
        } catch {
            pool.release()
            throw .internalError("sandbox.user: \(error)")
        }
        let log = log.withLock { $0 }
        do {
            let worker = try Worker.spawn(executable: executable, identity: identity, log: log,
                                          release: { [pool] in pool.release() })
            spawned.add(1, ordering: .relaxed)
            return worker
        } catch {
            throw .internalError("starting a render worker failed: \(error)")
        }
    }

    /// Whom a new worker becomes: only a root daemon's workers change identity (SPEC §16).
    private func workerIdentity() throws(WorkerIdentity.ResolutionError) -> WorkerIdentity? {
        guard geteuid() == 0 || getuid() == 0 else { return nil }
        if let identity = identity.withLock({ $0 }) { return identity }
        return try WorkerIdentity.resolve(.name("nobody"))
    }

    /// A replacement for a killed or crashed worker, started off the
    /// request's path so the next job finds it ready — when a slot is free:
    /// the processes never outnumber the render threads.
    private func prewarm() {
        guard pool.reserve() else { return }
        DispatchQueue.global().async { [weak self] in
            guard let self else { return }
            guard let worker = try? self.spawn() else { return }
            self.keep(worker)
        }
    }

    private func read(_ fd: OwnedFileDescriptor, maxBytes: Int) throws(RenderError) -> [UInt8] {
        guard let raw = fd.rawValue else { throw .internalError("a worker's result without a descriptor") }
        do {
            return try SharedMemory.readSealed(raw, maxBytes: maxBytes)
        } catch {
            throw .internalError("a worker's result could not be read: \(error)")
        }
    }

    private func unexpected(_ reply: WorkerReply) -> RenderError {
        .internalError("a worker answered out of turn: \(reply)")
    }
}
