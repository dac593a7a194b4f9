import Foundation
import Testing
import ThumbCodec
import ThumbImaging
@testable import ThumbRender

/// `q=auto`'s search (SPEC §17, Quality.md § Automatic quality) on real photographs
/// through the real encoders: the `q` it returns reaches the target on the
/// canonical rendition and the `q` below it does not, and it is the same
/// every time.
struct AutoQualityTests {
    static func photo(_ name: String) -> [UInt8] {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../ThumbCodecTests/Fixtures/photos/\(name)").standardized.path
        return [UInt8](FileManager.default.contents(atPath: path)!)
    }

    static func canonical(_ name: String) throws -> Bitmap {
        let source = photo(name)
        let header = try ThumbnailPipeline.probe(source: source, limits: PipelineLimits())
        return try AutoQuality.canonicalRendition(source: source, header: header)
    }

    /// Scored as the search scores: encoded by thumbd, decoded by thumbd.
    static func score(_ rendition: Bitmap, _ format: OutputFormat, _ q: Int) throws -> Double {
        let reference = format == .jpeg ? rendition.flattened() : rendition
        return try AutoQuality.score(reference, format: format, quality: q, background: nil, deadline: .none)
    }

    @Test(arguments: [("chelsea.jpg", OutputFormat.jpeg), ("rocket.jpg", .webp), ("coffee.jpg", .avif),
                      ("LadyBird.jpg", .jxl), ("Storm.jpg", .jpeg)])
    func theLowestQualityReachingTheTarget(photo: String, format: OutputFormat) throws {
        let rendition = try Self.canonical(photo)
        for target in [70, 80] {
            let found = try AutoQuality.search(rendition, format: format, target: target, background: nil)
            let score = try Self.score(rendition, format, found.q)
            if found.q < 100 { #expect(score >= Double(target), "\(photo) \(format) q \(found.q): \(score)") }
            if found.q > 1 {
                let below = try Self.score(rendition, format, found.q - 1)
                #expect(below < Double(target), "\(photo) \(format) q \(found.q - 1): \(below) reaches \(target)")
            }
            #expect(found.encodes == found.scores && found.encodes <= 14)
            // Deterministic: a second search of the same rendition tries the same q's and finds the same.
            let again = try AutoQuality.search(rendition, format: format, target: target, background: nil)
            #expect(again.q == found.q && again.encodes == found.encodes)
        }
    }

    /// The canonical rendition: ≤ 512 px on its long side, oriented, whole when smaller.
    @Test func theCanonicalRenditionIs512PixelsOnItsLongSide() throws {
        let wide = try Self.canonical("chelsea.jpg")
        #expect(wide.width == 451 && wide.height == 300)
        let large = try Self.canonical("Dragonfly_by_Bolly.jpg")
        #expect(max(large.width, large.height) == 512)
    }

    /// A search past its deadline stops with the render's own error.
    @Test func aSearchPastItsDeadlineStops() throws {
        let rendition = try Self.canonical("coffee.jpg")
        #expect(throws: RenderError.renderTimedOut) {
            _ = try AutoQuality.search(rendition, format: .avif, target: 80, background: nil,
                                       deadline: RenderDeadline(after: .zero))
        }
    }

    /// Too small to score: the best q, nothing encoded.
    @Test func anImageUnder8PixelsTakesTheBestQuality() throws {
        var tiny = Bitmap(width: 5, height: 40)
        for i in stride(from: 3, to: tiny.pixels.count, by: 4) { tiny.pixels[i] = 255 }
        let found = try AutoQuality.search(tiny, format: .webp, target: 80, background: nil)
        #expect(found.q == 100 && found.encodes == 0)
    }

    /// Cost of one search at 512 px (Quality.md § What a search costs): printed, not bounded (the host's noise).
    @Test func searchCost() throws {
        for photo in ["Dragonfly_by_Bolly.jpg", "coffee.jpg", "astronaut.jpg", "rocket.jpg"] {
            let rendition = try Self.canonical(photo)
            for format in [OutputFormat.jpeg, .webp, .avif, .jxl] {
                var found: AutoQuality.Search?
                let elapsed = try ContinuousClock().measure {
                    found = try AutoQuality.search(rendition, format: format, target: 80, background: nil)
                }
                print("auto-quality \(photo) \(rendition.width)x\(rendition.height) \(format.rawValue): q \(found!.q), "
                      + "\(found!.encodes) encodes, \(elapsed / .milliseconds(1)) ms")
            }
        }
    }
}
