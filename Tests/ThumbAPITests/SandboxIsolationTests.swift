import Foundation
import Synchronization
import Testing
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
        let engine = SandboxEngine(executable: WorkerExecutable.resolve())
        defer { engine.shutdown() }
        #expect(try engine.probeSandbox(.allocate(bytes: 2 << 30), admittedBytes: 64 << 20) == ENOMEM)
        // Within the cap the same allocation succeeds, in the same kind of worker.
        #expect(try engine.probeSandbox(.allocate(bytes: 32 << 20), admittedBytes: 64 << 20) == 0)
    }

    @Test func aWorkerCannotOpenAFileOrASocket() throws {
        let engine = SandboxEngine(executable: WorkerExecutable.resolve())
        defer { engine.shutdown() }
        #expect(try engine.probeSandbox(.open(path: "/etc/hostname")) == EPERM)
        #expect(try engine.probeSandbox(.open(path: #filePath)) == EPERM)
        #expect(try engine.probeSandbox(.socket) == EPERM)
        // This process can: the refusals are the worker's filter, not the files.
        let fd = open(#filePath, O_RDONLY)
        #expect(fd >= 0)
        close(fd)
    }
}
