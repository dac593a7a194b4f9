import Testing
import ThumbCodec
import ThumbImaging

@Suite struct JPEGDecoderTests {
    /// Full-scale decodes match djpeg (libjpeg-turbo-progs, `-dct int`) within ±1.
    @Test(arguments: [("testorig.jpg", "djpeg/testorig.ppm"), ("testorig-progressive.jpg", "djpeg/testorig.ppm"),
                      ("testimgari.jpg", "djpeg/testimgari.ppm")])
    func fullScaleMatchesDjpeg(_ jpeg: String, _ reference: String) throws {
        let ref = Fixtures.ppm(reference)
        let (bitmap, header) = try ImageDecoder.decodeBitmap(Fixtures.bytes(jpeg), maxPixels: 1 << 20)
        #expect(bitmap.width == ref.width && bitmap.height == ref.height)
        #expect(Fixtures.maxDifference(bitmap, rgb: ref.rgb) <= 1)
        #expect(bitmap.isOpaque && header.format == .jpeg)
    }

    /// DCT-scaled decodes match `djpeg -scale M/8` (rocket.jpg without its
    /// Adobe RGB profile: djpeg does not convert colours).
    @Test(arguments: [("testorig.jpg", "djpeg/testorig-3of8.ppm", 3), ("rocket.jpg", "djpeg/rocket-1of8.ppm", 1)])
    func scaledDecodeMatchesDjpegScale(_ jpeg: String, _ reference: String, _ m: Int) throws {
        let ref = Fixtures.ppm(reference)
        let data = ICC.strippingProfile(Fixtures.bytes(jpeg))
        let header = try ImageDecoder.probe(data, maxPixels: 1 << 24)
        var sink = BitmapSink()
        let info = try ImageDecoder.decode(data, header: header, minimumDisplayedSize: (ref.width, ref.height), into: &sink)
        let bitmap = try #require(sink.bitmap())
        #expect(info.scaleNumerator == m && info.width == ref.width && info.height == ref.height)
        #expect(Fixtures.maxDifference(bitmap, rgb: ref.rgb) <= 1)
    }

    @Test func scaleIsTheSmallestThatCoversTheTarget() {
        // 4224×3168 into 256×192: 1/8 gives 528×396.
        #expect(ImageDecoder.jpegScaleNumerator(width: 4224, height: 3168, orientation: .up,
                                                minimumDisplayedWidth: 256, minimumDisplayedHeight: 192) == 1)
        #expect(ImageDecoder.jpegScaleNumerator(width: 4224, height: 3168, orientation: .up,
                                                minimumDisplayedWidth: 600, minimumDisplayedHeight: 450) == 2)
        #expect(ImageDecoder.jpegScaleNumerator(width: 100, height: 100, orientation: .up,
                                                minimumDisplayedWidth: 100, minimumDisplayedHeight: 100) == 8)
        // ceil(227·3/8) = 86 covers 86 but ceil(227·2/8) = 57 does not.
        #expect(ImageDecoder.jpegScaleNumerator(width: 227, height: 149, orientation: .up,
                                                minimumDisplayedWidth: 86, minimumDisplayedHeight: 10) == 3)
        // Orientation 6 swaps axes: a displayed 600×100 box needs the stored *height* to reach 600.
        #expect(ImageDecoder.jpegScaleNumerator(width: 1000, height: 800, orientation: .right,
                                                minimumDisplayedWidth: 600, minimumDisplayedHeight: 100) == 6)
        #expect(ImageDecoder.jpegScaleNumerator(width: 1000, height: 800, orientation: .up,
                                                minimumDisplayedWidth: 600, minimumDisplayedHeight: 100) == 5)
    }

    @Test func grayscaleDecodesToGrayRGBA() throws {
        let (bitmap, header) = try ImageDecoder.decodeBitmap(Fixtures.bytes("gray.jpg"), maxPixels: 1 << 20)
        #expect(header.colorModel == .gray && header.components == 1)
        #expect(bitmap.width == 227 && bitmap.height == 149 && bitmap.isOpaque)
        for i in stride(from: 0, to: bitmap.pixels.count, by: 4) {
            #expect(bitmap.pixels[i] == bitmap.pixels[i + 1] && bitmap.pixels[i] == bitmap.pixels[i + 2])
            if bitmap.pixels[i] != bitmap.pixels[i + 2] { break }
        }
    }

    /// Adobe CMYK and YCCK (inverted) convert back to the RGB they were made from;
    /// a wrong inversion would give a negative image (mean error near 128).
    @Test(arguments: [("cmyk.jpg", ImageHeader.ColorModel.cmyk), ("ycck.jpg", .ycck)])
    func adobeCMYKAndYCCKConvertWithoutAProfile(_ name: String, _ model: ImageHeader.ColorModel) throws {
        let ref = Fixtures.ppm("djpeg/testorig.ppm")
        let (bitmap, header) = try ImageDecoder.decodeBitmap(Fixtures.bytes(name), maxPixels: 1 << 20)
        #expect(header.colorModel == model && header.components == 4)
        #expect(Fixtures.meanDifference(bitmap, rgb: ref.rgb) < 3)
    }

    @Test func twelveBitJPEGIsUnsupported() {
        #expect {
            try ImageDecoder.decodeBitmap(Fixtures.bytes("testorig12.jpg"), maxPixels: 1 << 20)
        } throws: { error in
            if case .unsupportedFormat = error as? CodecError { return true }
            return false
        }
    }

    @Test func truncatedJPEGsAreCorruptNeverGreyHalfImages() {
        for name in ["testorig.jpg", "testorig-progressive.jpg", "testimgari.jpg"] {
            let whole = Fixtures.bytes(name)
            // Arithmetic-coded data gives no warning when it runs out; the shim
            // catches that only before the last iMCU row (see jpeg.c), so its
            // last cut point is left out.
            let cuts = [3, 100, 700, whole.count / 2] + (name == "testimgari.jpg" ? [] : [whole.count - 200])
            for cut in cuts {
                do {
                    _ = try ImageDecoder.decodeBitmap(Array(whole.prefix(cut)), maxPixels: 1 << 20)
                    Issue.record("\(name) cut at \(cut) of \(whole.count) decoded")
                } catch {}
            }
            // A missing EOI after complete image data is tolerated.
            do {
                _ = try ImageDecoder.decodeBitmap(Array(whole.dropLast(2)), maxPixels: 1 << 20)
            } catch {
                Issue.record("\(name) without EOI: \(error)")
            }
        }
    }
}
