import Foundation
import Synchronization
import Testing
import ThumbClock
import ThumbCodec
import ThumbImaging
import ThumbRender
@testable import ThumbSandbox
import ThumbTestSupport

/// A HEIC grid decoded on four tile threads inside a worker: libheif's
/// threads start under the worker's seccomp filter (clone with glibc's thread
/// flags) and the render is the in-process one, with nothing in the log.
@Suite struct TileThreadWorkerTests {
    @Test func aGridRendersOnTileThreadsInsideTheWorker() throws {
        let engine = SandboxEngine(executable: WorkerExecutable.resolve(), maxIdle: 1)
        defer { engine.shutdown() }
        let lines = Mutex<[String]>([])
        engine.setLog { line in lines.withLock { $0.append(line) } }
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../ThumbCodecTests/Fixtures/large/grid-4x4.heif").standardized.path
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        let original = OriginalFile(descriptor: fd, offset: 0, length: bytes.count)
        let deadline = Deadline(after: .seconds(60), on: AnyClock(ContinuousClock()))
        let variant = PreparedVariant(width: 200, height: nil, fit: .inside)
        let plan = try engine.plan(original, variant: variant, limits: PipelineLimits(),
                                   budget: JobBudget(deadline: deadline, admittedBytes: 512 << 20))
        #expect(plan.tileThreads == 4)
        let encoding = EncodingSpec(format: .png, quality: 80, background: nil)
        let output = try engine.render(original, plan: plan, factsSHA256: nil, encoding: encoding,
                                       budget: JobBudget(deadline: deadline, admittedBytes: plan.estimatedMemory,
                                                         tileThreads: plan.tileThreads))
        let expected = try ThumbnailPipeline.prepare(source: bytes, plan: plan)
        #expect(output.bitmap.width == 200 && output.bitmap.pixels == expected.pixels)
        #expect(engine.counts.killed == 0 && engine.counts.crashed == 0)
        #expect(!lines.withLock { $0 }.contains { $0.contains("seccomp filter stopped") }, "\(lines.withLock { $0 })")
    }
}
