import Foundation
import Synchronization
import Testing
import ThumbCodec
import ThumbImaging

/// Embedded ICC profiles are converted to sRGB (API.md § Output "Colour"). References
/// are Pillow ImageCms conversions (perceptual) of the same pixels, made by
/// Fixtures/icc/make-fixtures.py. Tolerances are over 0…255 per channel.
@Suite struct ColorProfileTests {
    let testorig = Fixtures.bytes("testorig.jpg")

    /// A Display P3 JPEG decoded 1:1 matches lcms's conversion; the untagged
    /// pixels do not (they are what ignoring the profile would give).
    @Test func displayP3JPEGMatchesTheReference() throws {
        let reference = try ICC.reference("p3-testorig.png")
        let converted = try ICC.decode(ICC.tagging(testorig, profile: ICC.profile("display-p3.icc")))
        let unconverted = try ICC.decode(testorig)
        #expect(ICC.meanDifference(converted, reference) < 0.6)
        #expect(ICC.maxDifference(converted, reference) <= 3)
        #expect(ICC.meanDifference(unconverted, reference) > 3)
    }

    /// The thumbnail path resamples in the profile's linear light and converts
    /// the small result; the reference is converted first, then resized by the
    /// same renderer. The two orders agree except where out-of-gamut colours
    /// (12 % of this image is outside sRGB in P3) meet others: clipping after
    /// averaging and averaging after clipping differ there, most in the steep
    /// dark end of the sRGB curve. So: the mean, and 98 % of values within 3.
    @Test func displayP3PNGThumbnailMatchesConvertThenResize() throws {
        let data = Fixtures.bytes("icc/p3-testorig.png")
        let reference = try ICC.reference("p3-testorig.png")
        #expect(ICC.maxDifference(try ICC.decode(data), reference) <= 1, "1:1 decode")
        let header = try ImageDecoder.probe(data, maxPixels: 1 << 20)
        for (w, h) in [(75, 49), (160, 105)] {
            let geometry = try ThumbnailGeometry(sourceWidth: 227, sourceHeight: 149, width: w, height: h,
                                                 fit: .fill, enlarge: false)
            var renderer = ThumbnailRenderer(geometry: geometry, orientation: .up)
            try ImageDecoder.decode(data, header: header, minimumDisplayedSize: nil, into: &renderer)
            let thumbnail = renderer.finish()
            let expected = ThumbnailRenderer.render(reference, orientation: .up, geometry: geometry)
            let unconverted = ThumbnailRenderer.render(try ICC.decode(testorig), orientation: .up, geometry: geometry)
            #expect(ICC.meanDifference(thumbnail, expected) < 0.5, "\(w)×\(h)")
            #expect(ICC.fractionDiffering(thumbnail, expected, byMoreThan: 3) < 0.02, "\(w)×\(h)")
            #expect(ICC.meanDifference(unconverted, expected) > 3, "\(w)×\(h)")
        }
    }

    /// P3 colours beyond sRGB clip to the sRGB gamut edge: a saturated P3 red
    /// (240, 20, 20) becomes sRGB red, not the duller unconverted value.
    @Test func saturatedP3ColoursClipToSRGB() throws {
        let data = Fixtures.bytes("icc/p3-swatches.png")
        let reference = try ICC.reference("p3-swatches.png")
        let full = try ICC.decode(data)
        let geometry = try ThumbnailGeometry(sourceWidth: 128, sourceHeight: 16, width: 64, height: 8, fit: .fill, enlarge: false)
        var renderer = ThumbnailRenderer(geometry: geometry, orientation: .up)
        try ImageDecoder.decode(data, header: try ImageDecoder.probe(data, maxPixels: 1 << 20),
                                minimumDisplayedSize: nil, into: &renderer)
        let thumbnail = renderer.finish()
        for i in 0..<8 {
            let want = reference[16 * i + 8, 8]
            for got in [full[16 * i + 8, 8], thumbnail[8 * i + 4, 4]] {
                #expect(abs(Int(got.r) - Int(want.r)) <= 1 && abs(Int(got.g) - Int(want.g)) <= 1
                        && abs(Int(got.b) - Int(want.b)) <= 1, "swatch \(i): \(got) vs \(want)")
            }
        }
        let red = thumbnail[4, 4]
        #expect(red.r == 255 && red.g <= 1 && red.b <= 1, "P3 (240, 20, 20) → \(red)")
    }

    /// rocket.jpg (from the corpus) carries a real Adobe RGB (1998) profile;
    /// decoded at 1/8 like a thumbnail would be.
    @Test func adobeRGBPhotoMatchesTheReference() throws {
        let data = Fixtures.bytes("rocket.jpg")
        let reference = try ICC.reference("adobe-rocket-1of8.png")
        var sink = BitmapSink()
        let info = try ImageDecoder.decode(data, header: try ImageDecoder.probe(data, maxPixels: 1 << 20),
                                           minimumDisplayedSize: (reference.width, reference.height), into: &sink)
        let bitmap = try #require(sink.bitmap())
        var plain = BitmapSink()
        let stripped = ICC.strippingProfile(data)
        try ImageDecoder.decode(stripped, header: try ImageDecoder.probe(stripped, maxPixels: 1 << 20),
                                minimumDisplayedSize: (reference.width, reference.height), into: &plain)
        let unconverted = try #require(plain.bitmap())
        #expect(info.scaleNumerator == 1)
        #expect(ICC.meanDifference(bitmap, reference) < 0.6)
        #expect(ICC.maxDifference(bitmap, reference) <= 3)
        #expect(ICC.meanDifference(unconverted, reference) > 3)
    }

    /// Adobe CMYK and YCCK with a CMYK profile go through lcms2 (stored values
    /// inverted, as Photoshop writes them) instead of the naive inversion,
    /// which this dot-gain profile disagrees with by far more than the tolerance.
    @Test(arguments: [("cmyk.jpg", "cmyk-lut.png"), ("ycck.jpg", "ycck-lut.png")])
    func cmykJPEGWithAProfileUsesIt(_ name: String, _ referenceName: String) throws {
        let reference = try ICC.reference(referenceName)
        let plain = Fixtures.bytes(name)
        let converted = try ICC.decode(ICC.tagging(plain, profile: ICC.profile("cmyk-lut.icc")))
        let naive = try ICC.decode(plain)
        #expect(converted.isOpaque)
        #expect(ICC.meanDifference(converted, reference) < 0.6)
        #expect(ICC.maxDifference(converted, reference) <= 4)
        #expect(ICC.meanDifference(naive, reference) > 5)
    }

    /// A gray profile's curve linearises gray pixels (JPEG and PNG); output stays gray.
    @Test func grayProfileIsApplied() throws {
        let reference = try ICC.reference("gray-gamma18.png")
        let jpeg = try ICC.decode(ICC.tagging(Fixtures.bytes("gray.jpg"), profile: ICC.profile("gray-gamma18.icc")))
        let png = try ICC.decode(Fixtures.bytes("icc/gray-gamma18.png"))
        let unconverted = try ICC.decode(Fixtures.bytes("gray.jpg"))
        #expect(ICC.meanDifference(jpeg, reference) < 0.6 && ICC.maxDifference(jpeg, reference) <= 2)
        #expect(ICC.maxDifference(png, reference) <= 1)
        #expect(ICC.meanDifference(unconverted, reference) > 5)
        for p in stride(from: 0, to: png.pixels.count, by: 4) where png.pixels[p] != png.pixels[p + 1] || png.pixels[p] != png.pixels[p + 2] {
            Issue.record("pixel \(p / 4) is not gray")
            break
        }
    }

    /// A LUT-based RGB profile (A2B0 only) takes the full lcms2 transform:
    /// JPEG, and an RGBA PNG whose alpha must come through untouched.
    @Test func lutProfilesAreTransformedRowByRow() throws {
        let reference = try ICC.reference("lut-testorig.png")
        let jpeg = try ICC.decode(ICC.tagging(testorig, profile: ICC.profile("rgb-lut.icc")))
        #expect(ICC.meanDifference(jpeg, reference) < 0.6 && ICC.maxDifference(jpeg, reference) <= 3)
        #expect(ICC.meanDifference(try ICC.decode(testorig), reference) > 3)

        let rgbaReference = try ICC.reference("lut-rgba.png")
        let png = try ICC.decode(Fixtures.bytes("icc/lut-rgba.png"))
        #expect(ICC.maxDifference(png, rgbaReference) <= 1)
        #expect(stride(from: 3, to: png.pixels.count, by: 4).allSatisfy { png.pixels[$0] == rgbaReference.pixels[$0] })
        #expect(!png.isOpaque)
    }

    /// A profile too big for one APP2 segment spans several; they are joined
    /// by sequence number, whatever their order in the file.
    @Test func multiSegmentProfilesAreJoinedInSequenceOrder() throws {
        let big = ICC.padded(ICC.profile("display-p3.icc"), to: 200_000)
        let parts = ICC.segments(big)
        #expect(parts.count == 4)
        let inOrder = try ICC.decode(ICC.tagging(testorig, with: parts))
        let shuffled = try ICC.decode(ICC.tagging(testorig, with: [parts[2], parts[0], parts[3], parts[1]]))
        let small = try ICC.decode(ICC.tagging(testorig, profile: ICC.profile("display-p3.icc")))
        #expect(inOrder == small && shuffled == small)
        #expect(small != (try ICC.decode(testorig)))
        // Small segments work the same way: a 640-byte profile in ten pieces.
        let pieces = ICC.segments(ICC.profile("display-p3.icc"), chunk: 64)
        #expect(pieces.count == 10)
        #expect(try ICC.decode(ICC.tagging(testorig, with: pieces.reversed())) == small)
    }

    /// Render workers decode concurrently, sharing cached lcms2 transforms
    /// (the LUT PNG and WebP carry the same profile): parallel decodes agree
    /// with serial ones.
    @Test func concurrentDecodesAgree() throws {
        let inputs = [ICC.tagging(testorig, profile: ICC.profile("display-p3.icc")),
                      ICC.tagging(Fixtures.bytes("cmyk.jpg"), profile: ICC.profile("cmyk-lut.icc")),
                      Fixtures.bytes("icc/lut-rgba.png"), Fixtures.bytes("icc/ignored/garbage-iccp.png"),
                      Fixtures.bytes("icc/formats/lut-icc-rgba.webp")]
        let serial = try inputs.map { try ICC.decode($0) }
        let results = Mutex<[Int: Bitmap]>([:])
        DispatchQueue.concurrentPerform(iterations: 16) { i in
            let bitmap = try? ICC.decode(inputs[i % inputs.count])
            results.withLock { $0[i] = bitmap }
        }
        let all = results.withLock { $0 }
        #expect(all.count == 16)
        for (i, bitmap) in all { #expect(bitmap == serial[i % inputs.count], "decode \(i)") }
    }

    /// An sRGB profile (the ICC's sRGB2014, from the corpus) changes nothing:
    /// the result is bit-identical to the untagged image.
    @Test func sRGBProfileRendersBitIdentically() throws {
        let tagged = ICC.tagging(testorig, profile: ICC.profile("srgb2014.icc"))
        #expect(try ICC.decode(tagged) == (try ICC.decode(testorig)))
    }
}
