import Testing
import ThumbCodec
import ThumbImaging

@Suite struct FormatEncoderTests {
    /// testorig.jpg's pixels, and the same with a soft alpha ramp and a clear hole.
    private func photo(alpha: Bool) throws -> Bitmap {
        var bitmap = try ImageDecoder.decodeBitmap(Fixtures.bytes("testorig.jpg"), maxPixels: 1 << 20).bitmap
        guard alpha else { return bitmap }
        for y in 0..<bitmap.height {
            for x in 0..<bitmap.width {
                let inHole = (x - 150) * (x - 150) + (y - 70) * (y - 70) < 400
                bitmap.pixels[(y * bitmap.width + x) * 4 + 3] = inHole ? 0 : UInt8(x * 255 / (bitmap.width - 1))
            }
        }
        return bitmap
    }

    /// Colour is compared premultiplied, where a viewer sees it: lossy coders
    /// may change the colour of nearly transparent pixels freely.
    private func visiblePSNR(_ a: Bitmap, _ b: Bitmap) -> Double {
        BitmapPSNR.rgb(premultiplied(a), premultiplied(b))
    }

    private func premultiplied(_ bitmap: Bitmap) -> Bitmap {
        var out = bitmap
        for i in stride(from: 0, to: out.pixels.count, by: 4) {
            let a = Int(out.pixels[i + 3])
            for c in 0..<3 { out.pixels[i + c] = UInt8((Int(out.pixels[i + c]) * a + 127) / 255) }
        }
        return out
    }

    private func chunks(_ webp: [UInt8]) -> [String] {
        var names: [String] = []
        var i = 12
        while i + 8 <= webp.count {
            names.append(String(decoding: webp[i..<i + 4], as: UTF8.self))
            let size = Int(webp[i + 4]) | Int(webp[i + 5]) << 8 | Int(webp[i + 6]) << 16 | Int(webp[i + 7]) << 24
            i += 8 + size + (size & 1)
        }
        return names
    }

    @Test func webpRoundTripKeepsColourCloseAndAlphaExact() throws {
        for alpha in [false, true] {
            let bitmap = try photo(alpha: alpha)
            let webp = try WebPEncoder.encode(bitmap, quality: 82)
            #expect(Array(webp[0..<4]) == Array("RIFF".utf8) && Array(webp[8..<12]) == Array("WEBP".utf8))
            #expect(chunks(webp) == (alpha ? ["VP8X", "ALPH", "VP8 "] : ["VP8 "]), "lossy, alpha in ALPH only when needed")
            let (back, header) = try ImageDecoder.decodeBitmap(webp, maxPixels: 1 << 20)
            #expect(header.format == .webp && header.hasAlpha == alpha && !header.isLossless)
            #expect(back.width == bitmap.width && back.height == bitmap.height)
            #expect(visiblePSNR(back, bitmap) > 32, "alpha \(alpha)")
            #expect(BitmapPSNR.alpha(back, bitmap) == .infinity, "alpha is lossless")
        }
    }

    @Test func webpQualityChangesSize() throws {
        let bitmap = try photo(alpha: false)
        #expect(try WebPEncoder.encode(bitmap, quality: 30).count < WebPEncoder.encode(bitmap, quality: 95).count)
    }

    /// The `av1C` boxes of an AVIF: (monochrome, 4:2:0, high bit depth) of each.
    private func av1Configurations(_ avif: [UInt8]) -> [(mono: Bool, subsampled420: Bool, highBitDepth: Bool)] {
        (0..<avif.count - 8).filter { Array(avif[$0..<$0 + 4]) == Array("av1C".utf8) }.map {
            let flags = avif[$0 + 6]
            return (flags & 0x10 != 0, flags & 0x0C == 0x0C, flags & 0x40 != 0)
        }
    }

    @Test func avifRoundTripIs8Bit420WithLosslessAlpha() throws {
        for alpha in [false, true] {
            let bitmap = try photo(alpha: alpha)
            let avif = try AVIFEncoder.encode(bitmap, settings: .init(quantizer: 11, alphaQuantizer: 0))
            #expect(ImageFormat.sniff(avif) == .avif)
            let configs = av1Configurations(avif)
            #expect(configs.count == (alpha ? 2 : 1), "a colour item, plus an alpha item only when needed")
            #expect(configs.contains { !$0.mono && $0.subsampled420 && !$0.highBitDepth }, "8-bit 4:2:0 colour")
            let (back, header) = try ImageDecoder.decodeBitmap(avif, maxPixels: 1 << 20)
            #expect(header.format == .avif && header.hasAlpha == alpha && header.bitDepth == 8)
            #expect(back.width == bitmap.width && back.height == bitmap.height)
            #expect(visiblePSNR(back, bitmap) > 32, "alpha \(alpha)")
            #expect(BitmapPSNR.alpha(back, bitmap) == .infinity, "alpha is lossless")
        }
    }

    @Test func avifQualityChangesSizeAndFidelity() throws {
        let bitmap = try photo(alpha: false)
        let low = try AVIFEncoder.encode(bitmap, quality: 20), high = try AVIFEncoder.encode(bitmap, quality: 90)
        #expect(low.count < high.count)
        let lowBack = try ImageDecoder.decodeBitmap(low, maxPixels: 1 << 20).bitmap
        let highBack = try ImageDecoder.decodeBitmap(high, maxPixels: 1 << 20).bitmap
        #expect(BitmapPSNR.rgb(lowBack, bitmap) < BitmapPSNR.rgb(highBack, bitmap))
    }

    @Test func tinyAndOddSizedBitmapsEncode() throws {
        for (w, h) in [(1, 1), (3, 1), (1, 5), (17, 9)] {
            var bitmap = Bitmap(width: w, height: h)
            for i in 0..<(w * h) { bitmap.pixels[i * 4] = 200; bitmap.pixels[i * 4 + 3] = 255 }
            for data in [try WebPEncoder.encode(bitmap, quality: 80), try AVIFEncoder.encode(bitmap, quality: 80)] {
                let back = try ImageDecoder.decodeBitmap(data, maxPixels: 1 << 20).bitmap
                #expect(back.width == w && back.height == h && back.isOpaque)
                #expect(abs(Int(back[0, 0].r) - 200) < 12)
            }
        }
    }
}
