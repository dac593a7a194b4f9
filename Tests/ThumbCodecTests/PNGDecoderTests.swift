import Testing
import ThumbCodec
import ThumbImaging

@Suite struct PNGDecoderTests {
    /// Every valid PngSuite image decodes to exactly the RGBA8 an independent
    /// decoder (pypng, see Fixtures/make-png-reference.py) produces.
    @Test func pngSuiteMatchesTheIndependentReference() throws {
        let lines = String(decoding: Fixtures.bytes("pngsuite-rgba-sha256.txt"), as: UTF8.self)
            .split(separator: "\n")
        #expect(lines.count == 161)
        var mismatches: [String] = []
        for line in lines {
            let f = line.split(separator: " ").map(String.init)
            let (bitmap, _) = try ImageDecoder.decodeBitmap(Fixtures.bytes("pngsuite/\(f[0])"), maxPixels: 1 << 20)
            if bitmap.width != Int(f[1]) || bitmap.height != Int(f[2]) || Fixtures.sha256Hex(bitmap.pixels) != f[3] {
                mismatches.append(f[0])
            }
        }
        #expect(mismatches.isEmpty, "differ from reference: \(mismatches)")
    }

    @Test func everyCorruptPngSuiteFileIsATypedError() {
        let corrupt = Fixtures.names(in: "pngsuite").filter { $0.hasPrefix("x") && $0.hasSuffix(".png") }
        #expect(corrupt.count == 14)
        for name in corrupt {
            #expect(throws: CodecError.self, "\(name)") {
                try ImageDecoder.decodeBitmap(Fixtures.bytes("pngsuite/\(name)"), maxPixels: 1 << 20)
            }
        }
    }

    @Test func headerProbeReadsAlphaInterlaceAndSize() throws {
        let rgba = try ImageDecoder.probe(Fixtures.bytes("pngsuite/basn6a08.png"), maxPixels: 1 << 20)
        #expect(rgba.format == .png && rgba.width == 32 && rgba.height == 32 && rgba.hasAlpha && !rgba.isProgressive)
        let interlaced = try ImageDecoder.probe(Fixtures.bytes("pngsuite/basi2c08.png"), maxPixels: 1 << 20)
        #expect(interlaced.isProgressive && !interlaced.hasAlpha)
        let trns = try ImageDecoder.probe(Fixtures.bytes("pngsuite/tbbn3p08.png"), maxPixels: 1 << 20)
        #expect(trns.hasAlpha)
    }

    @Test func truncatedPNGsAreCorrupt() {
        let whole = Fixtures.bytes("pngsuite/basn2c08.png")
        for cut in [9, 20, 40, whole.count / 2, whole.count - 20] {
            #expect(throws: CodecError.self, "cut at \(cut)") {
                try ImageDecoder.decodeBitmap(Array(whole.prefix(cut)), maxPixels: 1 << 20)
            }
        }
        // Only the IEND trailer missing after complete image data is tolerated (API.md § Output).
        do {
            _ = try ImageDecoder.decodeBitmap(Array(whole.dropLast(12)), maxPixels: 1 << 20)
        } catch {
            Issue.record("PNG without IEND: \(error)")
        }
    }
}
