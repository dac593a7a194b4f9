import Foundation
import Testing
@testable import ThumbCodec
@testable import ThumbImaging
@testable import ThumbRender

/// The pipeline's side of embedded thumbnails (API.md § Formats read,
/// "Embedded thumbnails"): a render whose result the thumbnail covers
/// decodes it; the original's facts (`/info`, the attention focus) come from
/// the canonical decode of the primary image all the same, so a render never
/// shares its decode with them. `stripped` is the same file with its `thmb`
/// reference renamed, so that nothing sees a thumbnail in it.
@Suite struct EmbeddedThumbnailRenderTests {
    static func fixture(_ name: String) -> [UInt8] {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../ThumbCodecTests/Fixtures/thumbnail/\(name)").standardized.path
        return [UInt8](FileManager.default.contents(atPath: path) ?? Data())
    }

    static func stripped(_ bytes: [UInt8]) -> [UInt8] {
        let thmb = Array("thmb".utf8)
        var copy = bytes
        for i in 0..<(bytes.count - 4) where bytes[i..<i + 4].elementsEqual(thmb) {
            copy.replaceSubrange(i..<i + 4, with: Array("free".utf8))
        }
        return copy
    }

    private func plan(_ source: [UInt8], _ box: Int, fit: Fit = .inside) throws -> RenderPlan {
        try ThumbnailPipeline.plan(source: source, variant: PreparedVariant(width: box, height: box, fit: fit),
                                   limits: PipelineLimits())
    }

    /// A 128-px render (and a 100-px cover, whose pre-crop size is 150×100)
    /// is the thumbnail's, rendered by the plan's own renderer; a 256-px one
    /// is the primary's, as it is without the thumbnail.
    @Test(arguments: ["rocket-t160.heic", "rocket-t160.avif"])
    func aRenderTheThumbnailCoversDecodesIt(name: String) throws {
        let source = Self.fixture(name), stripped = Self.stripped(source)
        #expect(source.count > 10_000 && stripped != source)
        for (box, fit) in [(128, Fit.inside), (100, .cover)] {
            let plan = try plan(source, box, fit: fit)
            #expect(plan.usesEmbeddedThumbnail && !ThumbnailPipeline.sharesCanonicalDecode(plan))
            #expect(try !self.plan(stripped, box, fit: fit).usesEmbeddedThumbnail)
            var renderer = ThumbnailPipeline.renderer(for: plan)
            let info = try ImageDecoder.decode(source, header: plan.header, minimumDisplayedSize: plan.minimumDisplayedSize,
                                               useEmbeddedThumbnail: true, into: &renderer)
            #expect(info.thumbnailItem != nil && info.width == 160)
            let rendered = try ThumbnailPipeline.prepare(source: source, plan: plan)
            let fromPrimary = try ThumbnailPipeline.prepare(source: stripped, plan: try self.plan(stripped, box, fit: fit))
            #expect(rendered.pixels == renderer.finish().pixels)
            #expect(rendered.pixels != fromPrimary.pixels)
            #expect(rendered.width == fromPrimary.width && rendered.height == fromPrimary.height)
        }
        let large = try plan(source, 256)
        #expect(!large.usesEmbeddedThumbnail && ThumbnailPipeline.sharesCanonicalDecode(large))
        let same = try ThumbnailPipeline.prepare(source: source, plan: large).pixels
            == ThumbnailPipeline.prepare(source: stripped, plan: try plan(stripped, 256)).pixels
        #expect(same)
    }

    /// The facts are the primary's whether or not the file has a thumbnail,
    /// and whichever route computes them: on their own (`/info`), or with a
    /// render that decodes the thumbnail (`prepareWithFacts`, which then
    /// makes a canonical decode of its own and still renders from the thumbnail).
    @Test(arguments: ["rocket-t160.heic", "rocket-t160.avif"])
    func factsNeverComeFromTheThumbnail(name: String) throws {
        let source = Self.fixture(name), stripped = Self.stripped(source)
        let header = try ThumbnailPipeline.probe(source: source, limits: PipelineLimits())
        let strippedHeader = try ThumbnailPipeline.probe(source: stripped, limits: PipelineLimits())
        let facts = try ThumbnailPipeline.facts(source: source, header: header, sha256: "x")
        let withoutThumbnail = try ThumbnailPipeline.facts(source: stripped, header: strippedHeader, sha256: "x")
        #expect(facts == withoutThumbnail)
        #expect(facts.width == 640 && facts.height == 427)
        let plan = try plan(source, 128)
        let (bitmap, renderFacts) = try ThumbnailPipeline.prepareWithFacts(source: source, plan: plan, sha256: "x")
        #expect(renderFacts == facts)
        #expect(bitmap.pixels == (try ThumbnailPipeline.prepare(source: source, plan: plan)).pixels)
    }
}
