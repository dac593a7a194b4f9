import Testing
import ThumbCodec
import ThumbImaging

@Suite struct EncoderTests {
    private func photo() throws -> Bitmap {
        try ImageDecoder.decodeBitmap(Fixtures.bytes("testorig.jpg"), maxPixels: 1 << 20).bitmap
    }

    /// Marker codes of a JPEG up to its first scan.
    private func markers(_ jpeg: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 2
        while i + 4 <= jpeg.count, jpeg[i] == 0xFF {
            let marker = jpeg[i + 1]
            out.append(marker)
            if marker == 0xDA { break }
            i += 2 + (Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3]))
        }
        return out
    }

    /// QualityScale.jpeg: progressive (API.md § Formats written).
    @Test func jpegIsProgressiveJFIF420WithoutMetadata() throws {
        let bitmap = try photo()
        let jpeg = try JPEGEncoder.encode(bitmap, quality: 82)
        #expect(jpeg.prefix(2) == [0xFF, 0xD8] && jpeg.suffix(2) == [0xFF, 0xD9])
        let found = markers(jpeg)
        #expect(found.first == 0xE0 && Array(jpeg[6..<11]) == Array("JFIF\0".utf8))
        #expect(found.contains(0xC2), "progressive SOF2")
        #expect(!found.contains(where: { (0xE1...0xEF).contains($0) || $0 == 0xFE || $0 == 0xC0 }))
        let sof = try #require((2..<jpeg.count - 1).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC2 })
        #expect(jpeg[sof + 9] == 3 && jpeg[sof + 11] == 0x22, "3 components, luma sampled 2×2 (4:2:0)")
        let back = try ImageDecoder.decodeBitmap(jpeg, maxPixels: 1 << 20).bitmap
        #expect(back.width == bitmap.width && back.height == bitmap.height)
        let rgb = stride(from: 0, to: bitmap.pixels.count, by: 4).flatMap { bitmap.pixels[$0..<$0 + 3] }
        #expect(Fixtures.meanDifference(back, rgb: Array(rgb)) < 4)
    }

    @Test func qualityChangesSize() throws {
        let bitmap = try photo()
        #expect(try JPEGEncoder.encode(bitmap, quality: 30).count < JPEGEncoder.encode(bitmap, quality: 95).count)
    }

    @Test func pngIsRGBWhenOpaqueAndRGBAOtherwiseAndLossless() throws {
        let opaque = try photo()
        let png = try PNGEncoder.encode(opaque)
        #expect(png[25] == 2 && png[24] == 8, "colour type 2, 8 bits")
        #expect(try ImageDecoder.decodeBitmap(png, maxPixels: 1 << 20).bitmap == opaque)

        var translucent = opaque
        translucent.pixels[3] = 10
        let rgba = try PNGEncoder.encode(translucent)
        #expect(rgba[25] == 6)
        #expect(try ImageDecoder.decodeBitmap(rgba, maxPixels: 1 << 20).bitmap == translucent)
    }
}
