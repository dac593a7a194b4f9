import Foundation
import Testing
@testable import ThumbAPI
import ThumbClock
import ThumbImaging
import ThumbRender
@testable import ThumbSandbox
@testable import ThumbService
import ThumbTestSupport

/// SPEC §16 through the real daemon: renders run in worker processes
/// spawned from the thumbd binary, and reuse them. What a worker that hangs,
/// crashes, allocates past its cap or tries a forbidden call does is tested from
/// inside such a worker, by a preloaded stand-in for a hijacked decoder
/// (ThumbdTests' HostileWorkerTests): the product has no hook for it.
@Suite(.serialized) struct SandboxIsolationTests {
    private func target(_ origin: TestOrigin, _ path: String, width: Int = 64) -> String {
        "/thumbnail?url=" + origin.url(path).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            + "&w=\(width)&format=png"
    }

    private func engine(_ daemon: EndToEndTests.TestDaemon) throws -> SandboxEngine {
        try #require(daemon.service.engine as? SandboxEngine)
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

    /// Before a job, a worker gives back the freed heap it kept beyond what
    /// the job was admitted with and the 16 MiB it may keep anyway
    /// (`SandboxEngine.keptHeapBytes`), so a small job after a large one holds
    /// no more than the base the render queue counts for its worker
    /// (Isolation.md § Memory). A 2600² decode scaled to 2400 frees about
    /// 50 MiB of heap; a 1×1 encode admitted at nothing follows at once, long
    /// before the worker's idle trim (a second without work).
    /// (Plain builds only: a sanitizer's runtime in the worker holds memory of its own beside the job's.)
    @Test(.enabled(if: WorkerProcess.memoryCapSupported))
    func aSmallJobAfterALargeOneHoldsNoMoreThanTheWorkersBase() throws {
        let engine = SandboxEngine(executable: WorkerExecutable.resolve(), maxIdle: 1)
        defer { engine.shutdown() }
        let png = TestPNG.grey(width: 2600, height: 2600)
        let path = NSTemporaryDirectory() + "thumbd-base-\(getpid()).png"
        try Data(png).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        let original = OriginalFile(descriptor: fd, offset: 0, length: png.count)
        let budget = JobBudget(deadline: Deadline(after: .seconds(60), on: AnyClock(ContinuousClock())), admittedBytes: 512 << 20)
        let plan = try engine.plan(original, variant: PreparedVariant(width: 2400, height: nil, fit: .inside),
                                   limits: ServiceConfiguration().pipelineLimits, budget: budget)
        let output = try engine.render(original, plan: plan, factsSHA256: nil,
                                       encoding: EncodingSpec(format: .jpeg, quality: 80, background: nil),
                                       budget: JobBudget(deadline: Deadline(after: .seconds(60), on: AnyClock(ContinuousClock())), admittedBytes: plan.estimatedMemory))
        #expect(output.bitmap.width == 2400)
        _ = try engine.encode(Bitmap(width: 1, height: 1),
                              encoding: EncodingSpec(format: .png, quality: 80, background: nil),
                              budget: JobBudget(deadline: Deadline(after: .seconds(60), on: AnyClock(ContinuousClock())), admittedBytes: 0))
        let pid = try #require(engine.idleWorkerPIDs.first)
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("RssAnon:") })
        let anon = try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])) * 1024
        #expect(anon <= engine.workerBaseBytes, "the worker holds \(anon >> 20) MiB anonymous after the small job")
    }

}
