import Foundation
import Testing
import ThumbClock
import ThumbImaging
import ThumbRender
@testable import ThumbSandbox
import ThumbTestSupport

/// The sandbox engine on its own, with real workers of the thumbd binary:
/// what a worker keeps between jobs.
@Suite(.serialized) struct SandboxEngineTests {
    private static func budget(_ bytes: Int) -> JobBudget {
        JobBudget(deadline: Deadline(after: .seconds(60), on: AnyClock(ContinuousClock())), admittedBytes: bytes)
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
        let budget = Self.budget(512 << 20)
        let plan = try engine.plan(original, variant: PreparedVariant(width: 2400, height: nil, fit: .inside),
                                   limits: PipelineLimits(), budget: budget)
        let output = try engine.render(original, plan: plan, factsSHA256: nil,
                                       encoding: EncodingSpec(format: .jpeg, quality: 80, background: nil),
                                       budget: Self.budget(plan.estimatedMemory))
        #expect(output.bitmap.width == 2400)
        _ = try engine.encode(Bitmap(width: 1, height: 1),
                              encoding: EncodingSpec(format: .png, quality: 80, background: nil),
                              budget: Self.budget(0))
        let pid = try #require(engine.idleWorkerPIDs.first)
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("RssAnon:") })
        let anon = try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])) * 1024
        #expect(anon <= engine.workerBaseBytes, "the worker holds \(anon >> 20) MiB anonymous after the small job")
    }
}
