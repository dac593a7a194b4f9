import Foundation
import Testing
import ThumbAPI
@testable import ThumbClient

/// The request builder (API.md § Using thumbd from a Swift app): pixels from points,
/// the ladders, the one encoding, and signatures thumbd accepts.
@Suite struct ThumbURLBuilderTests {
    let base = URL(string: "http://127.0.0.1:9")!

    private func resolved(_ ladder: SizeLadder, _ w: Double?, _ h: Double?, scale: Double) throws -> ThumbURLBuilder.Resolved {
        try ThumbURLBuilder(baseURL: base, ladder: ladder)
            .resolve(ThumbnailSpec(source: "http://a/x.jpg", width: w, height: h, scale: scale, fit: .cover))
    }

    @Test func pointsTimesScaleRoundUpAndIntegerScalesSendDpr() throws {
        #expect(try resolved(.any, 100, 50, scale: 3) == .init(width: 100, height: 50, dpr: 3, preset: nil))
        #expect(try resolved(.any, 100, nil, scale: 1) == .init(width: 100, height: nil, dpr: nil, preset: nil))
        // A fractional scale or size: pixels, rounded up (33.333 · 3 is 100, not 101).
        #expect(try resolved(.any, 100, 50, scale: 2.5) == .init(width: 250, height: 125, dpr: nil, preset: nil))
        #expect(try resolved(.any, 33.333333333, nil, scale: 3).pixelWidth == 100)
        #expect(try resolved(.any, 10.2, nil, scale: 2) == .init(width: 21, height: nil, dpr: nil, preset: nil))
        #expect(try resolved(.any, 10, nil, scale: 5).dpr == nil, "dpr is 1…4")
    }

    @Test func laddersSnapUp() throws {
        let boxes: [SizeLadder.Box] = [.init(width: 64, height: 64), .init(width: 128, height: 128), .init(width: 256, height: 144)]
        // Points with dpr: the box as asked must be allowed.
        #expect(try resolved(.allowedSizes(boxes), 100, 100, scale: 2) == .init(width: 128, height: 128, dpr: 2, preset: nil))
        #expect(try resolved(.allowedSizes(boxes), 200, 100, scale: 3) == .init(width: 256, height: 144, dpr: 3, preset: nil))
        // Pixels for a fractional scale; the largest box when none covers.
        #expect(try resolved(.allowedSizes(boxes), 40, 40, scale: 1.5) == .init(width: 64, height: 64, dpr: nil, preset: nil))
        #expect(try resolved(.allowedSizes(boxes), 900, 900, scale: 1) == .init(width: 256, height: 144, dpr: nil, preset: nil))
        let presets = ["small": SizeLadder.Box(width: 64, height: 64), "card": .init(width: 512, height: 288)]
        #expect(try resolved(.presets(presets), 100, 60, scale: 2).preset == "card")
        // A width ladder in pixels; the height keeps the aspect ratio; dpr when it divides.
        #expect(try resolved(.widths([160, 320, 640]), 100, 50, scale: 2) == .init(width: 160, height: 80, dpr: 2, preset: nil))
        #expect(try resolved(.widths([160, 320, 640]), 110, 55, scale: 3) == .init(width: 640, height: 320, dpr: nil, preset: nil))
        #expect(try resolved(.widths([160, 320, 640]), 1000, nil, scale: 1).width == 640)
    }

    @Test func badSpecsAreRefusedBeforeAnyRequest() {
        let builder = ThumbURLBuilder(baseURL: base)
        for spec in [ThumbnailSpec(source: "ftp://a/x.jpg", width: 10), ThumbnailSpec(source: "http://a/x.jpg"),
                     ThumbnailSpec(source: "http://a/x.jpg", width: 0), ThumbnailSpec(source: "http://a/x.jpg", width: 10, scale: 0),
                     ThumbnailSpec(source: "http://a/x.jpg", width: .nan), ThumbnailSpec(source: "http://a/x.jpg", width: 10, quality: 101)] {
            #expect(throws: ThumbClientError.self) { try builder.thumbnailTarget(spec) }
        }
    }

    /// `.auto` is spelled `auto` on the wire (SPEC §15, §17); a number as it is.
    @Test func qualityAutoIsSpelledAuto() throws {
        let builder = ThumbURLBuilder(baseURL: base)
        let auto = try builder.thumbnailTarget(ThumbnailSpec(source: "http://a/x.jpg", width: 10, quality: .auto))
        #expect(auto.hasSuffix("&w=10&q=auto"))
        let number = try builder.thumbnailTarget(ThumbnailSpec(source: "http://a/x.jpg", width: 10, quality: 55))
        #expect(number.hasSuffix("&w=10&q=55"))
    }

    @Test func theTargetIsTheOneSpellingAndItsSignatureIsThumbds() throws {
        let builder = ThumbURLBuilder(baseURL: base, signingKey: "key")
        var spec = ThumbnailSpec(source: "https://cdn.example/a b/ü.jpg?x=(1)!", width: 64, height: 48, scale: 2, fit: .cover,
                                 format: .webp, quality: 70, gravity: .north, background: "ff000080", blur: 1.25)
        spec.focalPoint = (0.4204, 1)
        let target = try builder.thumbnailTarget(spec)
        let unsigned = String(target[..<target.range(of: "&sig=")!.lowerBound])
        #expect(unsigned == "/thumbnail?url=https%3A%2F%2Fcdn.example%2Fa%20b%2F%C3%BC.jpg%3Fx%3D%281%29%21&w=64&h=48&dpr=2"
                + "&fit=cover&format=webp&q=70&gravity=north&fp=0.42%2C1&bg=ff000080&blur=1.3")
        #expect(target.hasSuffix("&sig=" + URLSignature.sign(unsigned, key: "key")), "thumbd's own signing function agrees")
        #expect(builder.infoItemSignature(source: spec.source) == URLSignature.sign(try builder.infoTarget(source: spec.source)
            .components(separatedBy: "&sig=")[0], key: "key"))
        #expect(ThumbURLBuilder(baseURL: base).infoItemSignature(source: "http://a/") == nil)
    }

    /// An object in thumbd's S3 store is a source like any other (S3Sources.md).
    @Test func anS3SourceIsEncodedAndSignedLikeAnyOther() throws {
        let builder = ThumbURLBuilder(baseURL: base, signingKey: "key")
        let target = try builder.thumbnailTarget(ThumbnailSpec(source: "s3://media/a b+c.jpg", width: 64))
        let unsigned = String(target[..<target.range(of: "&sig=")!.lowerBound])
        #expect(unsigned == "/thumbnail?url=s3%3A%2F%2Fmedia%2Fa%20b%2Bc.jpg&w=64")
        #expect(target.hasSuffix("&sig=" + URLSignature.sign(unsigned, key: "key")))
    }
}
