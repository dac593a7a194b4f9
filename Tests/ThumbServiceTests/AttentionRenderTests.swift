import Foundation
import Testing
@testable import ThumbFetch
@testable import ThumbImaging
import ThumbRender
@testable import ThumbService
import ThumbTestSupport

/// `gravity=attention` through the service (API.md § Composition): the
/// window lands on an off-centre subject, and the original's focus is
/// computed once — by the first render that needs it — then reused from
/// memory, and from disk after a restart.
@Suite(.serialized) struct AttentionRenderTests {
    /// 600×300: a smooth grey ramp with a saturated, textured red square
    /// near the right edge (x 480–560, y 100–200).
    static let scene: [UInt8] = {
        var pixels = [UInt8](repeating: 255, count: 600 * 300 * 4)
        for y in 0..<300 {
            for x in 0..<600 {
                let o = (y * 600 + x) * 4
                let grey = UInt8(110 + x / 20)
                (pixels[o], pixels[o + 1], pixels[o + 2]) = (grey, grey, grey)
                if (480..<560).contains(x), (100..<200).contains(y) {
                    let stripe = (x / 4 + y / 4) % 2 == 0
                    (pixels[o], pixels[o + 1], pixels[o + 2]) = stripe ? (230, 20, 30) : (150, 0, 10)
                }
            }
        }
        let bitmap = Bitmap(width: 600, height: 300, pixels: pixels)
        guard let png = try? ThumbnailPipeline.encode(bitmap, format: .png, quality: 90).bytes else {
            preconditionFailure("PNG encoding of the scene failed")
        }
        return png
    }()

    /// Pixels of the subject's red in a decoded result.
    private func redPixels(_ rendition: Rendition) throws -> Int {
        let bitmap = try #require(try? ThumbnailPipeline.prepare(source: rendition.bytes,
                                                                  variant: PreparedVariant(width: 4096, height: 4096),
                                                                  limits: PipelineLimits()))
        var count = 0
        for y in 0..<bitmap.height {
            for x in 0..<bitmap.width {
                let p = bitmap[x, y]
                if p.r > 120 && p.g < 60 && p.b < 60 { count += 1 }
            }
        }
        return count
    }

    private func render(_ s: ThumbnailService, _ url: String, _ query: [(String, String)]) throws -> ThumbnailResult {
        switch answer(s, try thumbnailRequest(url, query)) {
        case .success(let result): return result
        case .failure(let error): throw error
        }
    }

    @Test func theWindowLandsOnTheSubjectAndTheFocusIsComputedOnce() throws {
        let origin = try TestOrigin(extraRoutes: ["/scene.png": Self.scene])
        defer { origin.stop() }
        let store = NSTemporaryDirectory() + "thumbd-attention-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: store) }
        func service() throws -> ThumbnailService {
            var c = ServiceConfiguration()
            c.origin.allowPrivateNetworks = true
            c.limits.maxRenderSeconds = 600
            return ThumbnailService(configuration: c, fetcher: Fetcher(policy: FetchPolicy(configuration: c)),
                                    disk: try DiskStore(directory: store, maxBytes: 10 << 20))
        }
        let url = origin.url("/scene.png")
        let box = [("w", "100"), ("h", "100"), ("fit", "cover"), ("format", "png")]

        let s = try service()
        let centre = try render(s, url, box)
        #expect(try redPixels(centre.rendition) == 0, "the centre crop misses the subject (the test's premise)")
        let attention = try render(s, url, box + [("gravity", "attention")])
        #expect(attention.rendition.width == 100 && attention.rendition.height == 100)
        #expect(try redPixels(attention.rendition) > 500, "the attention window holds the subject")
        #expect(s.statistics.counters.factsComputed == 1)
        let facts = try #require(s.disk?.facts(url: URLNormalization.normalize(url) ?? url,
                                               sha256: Digest.hex(Digest.sha256(Self.scene))))
        #expect((750...950).contains(facts.focus.x) && (300...700).contains(facts.focus.y), "\(facts.focus)")

        // Another size and format: the stored focus, no new computation.
        let other = try render(s, url, [("w", "60"), ("h", "60"), ("fit", "cover"), ("gravity", "attention"),
                                         ("format", "png")])
        #expect(try redPixels(other.rendition) > 100)
        #expect(s.statistics.counters.factsComputed == 1, "reused from memory")
        s.renders.shutdown()

        // A restart: the facts come from beside the original on disk.
        let again = try service()
        defer { again.renders.shutdown() }
        let afterRestart = try render(again, url, [("w", "80"), ("h", "80"), ("fit", "cover"),
                                                   ("gravity", "attention"), ("format", "png")])
        #expect(afterRestart.cache == .disk)
        #expect(try redPixels(afterRestart.rendition) > 200)
        #expect(again.statistics.counters.factsComputed == 0, "read from disk")
        #expect(origin.hits("/scene.png") == 1)
    }

    /// The first render of a source computes its facts (API.md § /info: "during its first
    /// render"), whatever the variant; the renders after it reuse them.
    @Test func theFirstRenderComputesTheFactsOnce() throws {
        let origin = try TestOrigin(extraRoutes: ["/scene.png": Self.scene])
        defer { origin.stop() }
        let s = try loopbackService("first-render-facts")
        defer { s.renders.shutdown(); if let d = s.disk?.directory { try? FileManager.default.removeItem(atPath: d) } }
        let url = origin.url("/scene.png")
        for query in [[("w", "100"), ("h", "100"), ("fit", "cover")], [("w", "100"), ("gravity", "attention")],
                      [("w", "1000"), ("enlarge", "1")], [("w", "100"), ("h", "100"), ("fit", "cover"), ("gravity", "east")]] {
            guard case .success = answer(s, try thumbnailRequest(url, query)) else {
                Issue.record("\(query) failed"); continue
            }
            #expect(s.statistics.counters.factsComputed == 1, "\(query)")
        }
        let facts = try #require(s.disk?.facts(url: URLNormalization.normalize(url) ?? url,
                                               sha256: Digest.hex(Digest.sha256(Self.scene))))
        #expect(facts.format == .png && facts.thumbhash.count >= 17 && facts.frames == 1)
    }
}
