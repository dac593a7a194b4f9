import Foundation
import Testing
@testable import ThumbCodec
@testable import ThumbRender

/// A 12 MP HEIC (no thumbnail item) rendered large (Configuration.md
/// `limits.maxDecodeMemoryBytes`): at w=1500 there is no box step, and the
/// estimate counted the whole decode as floats plus an RGBA copy of it that
/// libheif's band conversion never makes, so the default budget refused it.
/// `large/flat-12mp.heif` is `heif-enc -q 50` of a flat grey 4224×3168 PNG
/// (8 KB; named .heif so the fuzzers' seed script, which takes *.heic, leaves
/// a 12 MP decode out of their seeds).
@Suite struct LargeHEICRenderTests {
    static let source: [UInt8] = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../ThumbCodecTests/Fixtures/large/flat-12mp.heif").standardized.path
        return [UInt8](FileManager.default.contents(atPath: path) ?? Data())
    }()

    /// What the default `limits.maxDecodeMemoryBytes` (512 MiB) leaves a job
    /// on an 8-core host: the budget less each sandboxed worker's base
    /// (`SandboxEngine.workerBaseBytes`, 24 MiB; RenderQueue's `reserved`).
    static let defaultJobBudget = 536_870_912 - 8 * (24 << 20)

    @Test func a12MPHEICAt1500IsAdmittedAtTheDefaultBudgetAndRenders() throws {
        let plan = try ThumbnailPipeline.plan(source: Self.source, variant: PreparedVariant(width: 1500, height: nil),
                                              limits: PipelineLimits())
        #expect(plan.header.format == .heic && plan.header.width == 4224 && plan.header.height == 3168)
        #expect(plan.estimatedMemoryWithFacts <= Self.defaultJobBudget,
                "estimate \(plan.estimatedMemory >> 20) MiB, with facts \(plan.estimatedMemoryWithFacts >> 20) MiB")
        // Still more than what libheif holds: its planes and the result.
        #expect(plan.estimatedMemory >= 3 * 4224 * 3168 + 1500 * 1125 * 20)
        let bitmap = try ThumbnailPipeline.prepare(source: Self.source, plan: plan)
        #expect(bitmap.width == 1500 && bitmap.height == 1125)
        let off = stride(from: 0, to: bitmap.pixels.count, by: 4).filter { i in
            (0..<3).contains { abs(Int(bitmap.pixels[i + $0]) - 120) > 2 } || bitmap.pixels[i + 3] != 255
        }
        #expect(off.isEmpty, "\(off.count) pixels are not the source's grey")
    }
}
