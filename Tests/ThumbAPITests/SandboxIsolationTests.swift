import Foundation
import Synchronization
import Testing
import ThumbImaging
import ThumbTestSupport
@testable import ThumbAPI
@testable import ThumbSandbox
@testable import ThumbService

/// SPEC §16 through the real daemon: renders run in worker processes
/// spawned from the thumbd binary; a worker that hangs is killed at the
/// deadline and replaced while other renders go on, one that crashes answers
/// its request 422 without being remembered, one past its memory cap fails
/// in itself, and none can open a file or a socket.
@Suite(.serialized) struct SandboxIsolationTests {
    private func target(_ origin: TestOrigin, _ path: String, width: Int = 64) -> String {
        "/thumbnail?url=" + origin.url(path).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            + "&w=\(width)&format=png"
    }

    private func engine(_ daemon: EndToEndTests.TestDaemon) throws -> SandboxEngine {
        try #require(daemon.service.engine as? SandboxEngine)
    }

    private func render(_ daemon: EndToEndTests.TestDaemon) -> [String: Any] {
        InfoHTTPTests.object(daemon.get("/stats").body)["render"] as? [String: Any] ?? [:]
    }

    /// The size of a fixture: the hooks pick their job by the original's length.
    private func length(_ path: String) throws -> Int {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../ThumbCodecTests/Fixtures" + path).standardized
        return try Data(contentsOf: url).count
    }

    @Test func rendersRunInWorkerProcessesOfTheThumbdBinary() throws {
        try EndToEndTests.withDaemon({ $0.service.workers = 1 }) { daemon, origin in
            let engine = try engine(daemon)
            #expect(engine.executable.hasSuffix("/thumbd"))
            let first = daemon.get(target(origin, "/cat.jpg"))
            #expect(first.status == 200 && first.headers["x-image-width"] == "64")
            // The next render (and the first one's facts, behind it) reuse the idle worker.
            #expect(daemon.get(target(origin, "/cat.jpg", width: 32)).status == 200)
            #expect(engine.counts == EngineCounts(killed: 0, crashed: 0, spawned: 1))
        }
    }

    @Test func aHungDecoderIsKilledAtTheDeadlineWhileOtherRendersGoOn() throws {
        let hung = try length("/formats/photo-alpha.webp")
        try EndToEndTests.withDaemon({
            $0.service.limits.maxRenderSeconds = 2
            $0.service.workers = 2
        }) { daemon, origin in
            let engine = try engine(daemon)
            engine.testHook.withLock { $0 = { kind, length in kind == .render && length == hung ? .hang : nil } }
            let answer = Mutex<(Int, Double)?>(nil)
            let started = ContinuousClock.now
            let thread = Thread {
                let response = daemon.get(target(origin, "/formats/photo-alpha.webp"))
                answer.withLock { $0 = (response.status, (ContinuousClock.now - started) / .seconds(1)) }
            }
            thread.start()
            // Renders of other sources are served while the hung one waits for its kill.
            Thread.sleep(forTimeInterval: 0.3)
            for width in [40, 48, 56] {
                #expect(daemon.get(target(origin, "/cat.jpg", width: width)).status == 200)
            }
            #expect(answer.withLock { $0 } == nil)
            let deadline = ContinuousClock.now + .seconds(30)
            while answer.withLock({ $0 }) == nil && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
            let (status, seconds) = try #require(answer.withLock { $0 })
            #expect(status == 422)
            #expect(seconds >= 2 && seconds < 10)
            #expect(engine.counts.killed == 1 && render(daemon)["killed"] as? Int == 1)
            #expect(String(decoding: daemon.get("/metrics").body, as: UTF8.self).contains("thumbd_render_killed_total 1"))
            // Replaced: the same source renders once the hook is gone (the failure was not remembered).
            engine.testHook.withLock { $0 = nil }
            #expect(daemon.get(target(origin, "/formats/photo-alpha.webp")).status == 200)
            // Kills do not pile up processes: the pool keeps at most one idle worker per render thread.
            engine.testHook.withLock { $0 = { kind, length in kind == .render && length == hung ? .hang : nil } }
            var relaxed = daemon.service.config
            relaxed.limits.maxRenderSeconds = 0.3
            daemon.service.reload(relaxed)
            for width in [20, 24, 28, 32] {
                #expect(daemon.get(target(origin, "/formats/photo-alpha.webp", width: width)).status == 422)
            }
            #expect(engine.counts.killed == 5)
            #expect(eventually { engine.idleCount >= 1 }, "a replacement is ready")
            Thread.sleep(forTimeInterval: 0.5)   // every replacement started has arrived
            #expect((1...2).contains(engine.idleCount), "\(engine.idleCount) idle workers for 2 render threads")
        }
    }

    @Test func aCrashingDecoderAnswers422NotRememberedAndTheDaemonStaysUp() throws {
        let crashing = try length("/formats/photo-alpha.webp")
        try EndToEndTests.withDaemon { daemon, origin in
            let engine = try engine(daemon)
            engine.testHook.withLock { $0 = { _, length in length == crashing ? .crash : nil } }
            let crashed = daemon.get(target(origin, "/formats/photo-alpha.webp"))
            #expect(crashed.status == 422 && crashed.headers["cache-control"] == "no-store")
            let body = String(decoding: crashed.body, as: UTF8.self)
            #expect(body.contains("\"corrupt_image\"") && body.contains("signal 11"))
            #expect(engine.counts.crashed == 1 && render(daemon)["crashed"] as? Int == 1)
            #expect(String(decoding: daemon.get("/metrics").body, as: UTF8.self).contains("thumbd_render_crashed_total 1"))
            // Other sources are served, and the crashed one is tried afresh once its input is fine.
            #expect(daemon.get(target(origin, "/cat.jpg")).status == 200)
            engine.testHook.withLock { $0 = nil }
            #expect(daemon.get(target(origin, "/formats/photo-alpha.webp")).status == 200)
            #expect(engine.counts.crashed == 1)
        }
    }

    /// The cap is the job's admitted memory plus `baseMemoryBytes`; an
    /// allocation of 2 GiB is far past both. (Sanitized builds run their
    /// workers uncapped: the sanitizers' shadow memory needs terabytes of
    /// address space, so there the check has nothing to check.)
    @Test(.enabled(if: WorkerProcess.memoryCapSupported))
    func anAllocationPastTheCapFailsInTheWorker() throws {
        let engine = SandboxEngine(executable: WorkerExecutable.resolve(), maxIdle: 1)
        defer { engine.shutdown() }
        #expect(try engine.probeSandbox(.allocate(bytes: 2 << 30), admittedBytes: 64 << 20) == ENOMEM)
        // Within the cap the same allocation succeeds, in the same kind of worker.
        #expect(try engine.probeSandbox(.allocate(bytes: 32 << 20), admittedBytes: 64 << 20) == 0)
    }

    /// Before a job, a worker gives back the freed heap it kept beyond what
    /// the job was admitted with and the 16 MiB it may keep anyway
    /// (`SandboxEngine.keptHeapBytes`), so a small job after a large one holds
    /// no more than the base the render queue counts for its worker
    /// (Isolation.md § Memory). A 2600² decode scaled to 2400 frees about
    /// 50 MiB of heap; a 1×1 encode admitted at nothing follows at once, long
    /// before the worker's idle trim (a second without work).
    @Test func aSmallJobAfterALargeOneHoldsNoMoreThanTheWorkersBase() throws {
        let engine = SandboxEngine(executable: WorkerExecutable.resolve(), maxIdle: 1)
        defer { engine.shutdown() }
        let png = TestPNG.grey(width: 2600, height: 2600)
        let path = NSTemporaryDirectory() + "thumbd-base-\(getpid()).png"
        try Data(png).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        let original = OriginalFile(descriptor: fd, offset: 0, length: png.count)
        let budget = JobBudget(seconds: 60, admittedBytes: 512 << 20)
        let plan = try engine.plan(original, variant: PreparedVariant(width: 2400, height: nil, fit: .inside),
                                   limits: ServiceConfiguration().pipelineLimits, budget: budget)
        let output = try engine.render(original, plan: plan, factsSHA256: nil,
                                       encoding: EncodingSpec(format: .jpeg, quality: 80, background: nil),
                                       budget: JobBudget(seconds: 60, admittedBytes: plan.estimatedMemory))
        #expect(output.bitmap.width == 2400)
        _ = try engine.encode(Bitmap(width: 1, height: 1),
                              encoding: EncodingSpec(format: .png, quality: 80, background: nil),
                              budget: JobBudget(seconds: 60, admittedBytes: 0))
        let pid = try #require(engine.idleWorkerPIDs.first)
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("RssAnon:") })
        let anon = try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])) * 1024
        #expect(anon <= engine.workerBaseBytes, "the worker holds \(anon >> 20) MiB anonymous after the small job")
    }

    @Test func aWorkerCannotOpenAFileOrASocket() throws {
        let engine = SandboxEngine(executable: WorkerExecutable.resolve(), maxIdle: 1)
        defer { engine.shutdown() }
        // ENOSYS: not on the filter's allow-list, as if this kernel had no such call.
        #expect(try engine.probeSandbox(.open(path: "/etc/hostname")) == ENOSYS)
        #expect(try engine.probeSandbox(.open(path: #filePath)) == ENOSYS)
        #expect(try engine.probeSandbox(.socket) == ENOSYS)
        // This process can: the refusals are the worker's filter, not the files.
        let fd = open(#filePath, O_RDONLY)
        #expect(fd >= 0)
        close(fd)
    }

    /// Issue 19's hostile shapes (Tests/Benchmarks/hostile_segments.py) with
    /// the JPEG, PNG and GIF structure walks switched off in the workers: the
    /// libraries meet them, and the kernel's bounds alone hold them. 100 000
    /// APP1 or APP2 segments keep libjpeg in one quadratic call for ~10 s
    /// (killed at the 2 s deadline). 256 zTXt chunks inflating to 1 GiB, and
    /// 150 000 GIF frames, are harmless to the libraries as thumbd sets them up
    /// (libpng skips text chunks; giflib reads the first frame): served. Each
    /// answer comes within the deadline and a margin, the daemon's memory does
    /// not grow with the attack, and it serves on.
    @Test func theHostileShapesHoldWithTheIsolationAlone() throws {
        let made = NSTemporaryDirectory() + "thumbd-hostile-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: made) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Benchmarks/hostile_segments.py").standardized.path
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", script, made]
        python.standardOutput = FileHandle.nullDevice
        try python.run()
        python.waitUntilExit()
        try #require(python.terminationStatus == 0)
        let names = ["app1-segments.jpg", "app2-segments.jpg", "ztxt-bomb.png", "gif-frames.gif"]
        var routes: [String: [UInt8]] = [:]
        for name in names { routes["/" + name] = [UInt8](try Data(contentsOf: URL(fileURLWithPath: made + "/" + name))) }
        let origin = try TestOrigin(extraRoutes: routes)
        defer { origin.stop() }
        let dir = NSTemporaryDirectory() + "thumbd-isolation-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let daemon = try EndToEndTests.TestDaemon(store: dir) {
            $0.service.limits.maxRenderSeconds = 2
            $0.service.workers = 2
        }
        defer { daemon.stop() }
        let engine = try engine(daemon)
        engine.testStructureLimits.store(false, ordering: .relaxed)
        #expect(daemon.get(target(origin, "/cat.jpg")).status == 200)
        let before = Self.residentBytes()
        for name in names {
            let started = ContinuousClock.now
            let answer = daemon.get(target(origin, "/" + name))
            let seconds = (ContinuousClock.now - started) / .seconds(1)
            #expect(answer.status == (name.hasSuffix(".jpg") ? 422 : 200), "\(name): \(String(decoding: answer.body.prefix(200), as: UTF8.self))")
            #expect(seconds < 2 + 3, "\(name) took \(seconds) s")
        }
        #expect(engine.counts.killed >= 2, "the APP1 and APP2 renders ran into their deadline")
        #expect(Self.residentBytes() - before < 64 << 20, "the daemon itself held none of it")
        #expect(daemon.get(target(origin, "/cat.jpg", width: 48)).status == 200)
    }

    /// This process's resident set (VmRSS), in bytes.
    static func residentBytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
}
