import Testing
import ThumbCodec
import ThumbImaging

/// Truncated, garbled and oversized WebP, GIF, AVIF and HEIC sources are typed
/// errors, never a crash, and never a made-up picture.
@Suite struct FormatBadInputTests {
    private func decode(_ data: [UInt8]) throws(CodecError) -> Bitmap {
        try ImageDecoder.decodeBitmap(data, maxPixels: 1 << 22).bitmap
    }

    /// Every prefix either fails with a `CodecError` or gives exactly the whole
    /// file's picture (a GIF cut after its first frame still has that frame;
    /// a missing block terminator right after complete image data is tolerated).
    @Test(arguments: ["animated.gif", "animated.webp", "orient-6-exif-prefix.webp", "photo-alpha.webp",
                      "photo-interlaced.gif", "photo-alpha.heic", "photo-10bit.avif"])
    func everyPrefixFailsOrGivesTheWholePicture(_ name: String) throws {
        let whole = Fixtures.bytes("formats/\(name)")
        let expected = try decode(whole)
        let step = max(1, whole.count / 150)
        var decodedPrefixes = 0
        for cut in stride(from: 1, to: whole.count, by: step) {
            do {
                let bitmap = try decode(Array(whole.prefix(cut)))
                #expect(bitmap == expected, "\(name) cut at \(cut) decodes to a different picture")
                decodedPrefixes += 1
            } catch {
                // Any CodecError is fine; only the type is checked (by `throws(CodecError)`).
            }
        }
        if name.hasSuffix(".webp") || name.hasSuffix(".heic") || name.hasSuffix(".avif") {
            #expect(decodedPrefixes == 0, "\(name): a truncated file decoded")
        }
    }

    @Test func aGIFCutAfterItsFirstFrameStillDecodesAndOneCutInsideItDoesNot() throws {
        let whole = Fixtures.bytes("formats/animated.gif")
        let expected = try decode(whole)
        // The second frame's image descriptor: ',' at left 0, top 0, 24×16.
        let second = try #require((0..<whole.count - 9).last { whole[$0] == 0x2C })
        #expect(try decode(Array(whole.prefix(second))) == expected)
        // Within the first frame's LZW data.
        let first = try #require((0..<whole.count - 9).first { whole[$0] == 0x2C })
        #expect(throws: CodecError.corrupt("GIF data ends early (truncated)")) {
            try decode(Array(whole.prefix(first + 14)))
        }
        // Only the block terminator and trailer missing after complete image data.
        let single = Fixtures.bytes("formats/photo-transparent.gif")
        #expect(single.suffix(2) == [0x00, 0x3B])
        #expect(try decode(Array(single.dropLast(2))) == decode(single))
    }

    @Test func garbageAfterAValidMagicIsATypedError() {
        var rng = SystemRandomNumberGenerator()
        let magics: [[UInt8]] = [
            Array("RIFF".utf8) + [0x40, 0, 0, 0] + Array("WEBPVP8 ".utf8),
            Array("RIFF".utf8) + [0x40, 0, 0, 0] + Array("WEBPVP8L".utf8),
            Array("RIFF".utf8) + [0x40, 0, 0, 0] + Array("WEBPVP8X".utf8),
            Array("GIF89a".utf8), Array("GIF87a".utf8),
            [0, 0, 0, 0x18] + Array("ftypavif".utf8) + [0, 0, 0, 0] + Array("mif1miaf".utf8),
            [0, 0, 0, 0x18] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8),
        ]
        for magic in magics {
            #expect(throws: CodecError.self) { try decode(magic) }
            for _ in 0..<40 {
                let junk = magic + (0..<Int.random(in: 0...800, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                #expect(throws: CodecError.self) { try decode(junk) }
            }
        }
    }

    @Test func flippedBytesInsideImageDataAreTypedErrorsOrPictures() {
        var rng = SystemRandomNumberGenerator()
        for name in ["photo-alpha.webp", "vp80-02-inter-1402.webp", "photo-interlaced.gif", "photo-alpha.avif", "photo-alpha.heic"] {
            let whole = Fixtures.bytes("formats/\(name)")
            for _ in 0..<25 {
                var damaged = whole
                for _ in 0..<4 { damaged[Int.random(in: 32..<whole.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng) }
                do {
                    let bitmap = try decode(damaged)
                    #expect(bitmap.width * bitmap.height > 0)
                } catch {
                    // A CodecError: fine.
                }
            }
        }
    }

    /// Sizes are read from the header and refused before anything is decoded
    /// or a canvas allocated (SourcesAndLimits.md).
    @Test func oversizedHeadersAreRefusedByTheProbe() throws {
        // Animated WebP: VP8X canvas 100000×100000 (24-bit sides minus one at
        // bytes 24…29; libwebp itself calls 2^32 pixels or more corrupt) and
        // 50000×50000, which only the limit refuses.
        for side in [100_000, 50_000] {
            var webp = Fixtures.bytes("formats/animated.webp")
            for offset in [24, 27] {
                webp.replaceSubrange(offset..<offset + 3, with: [UInt8((side - 1) & 255), UInt8((side - 1) >> 8 & 255), UInt8((side - 1) >> 16)])
            }
            try expectTooLarge(webp, side, side)
            if side == 50_000 { #expect(try ImageDecoder.probe(webp, maxPixels: 3_000_000_000).width == side) }
        }

        // Lossless WebP: VP8L's 14-bit sides at their maximum, 16384×16384.
        var vp8l = Fixtures.bytes("formats/lossless2.webp")
        #expect(Array(vp8l[12..<16]) == Array("VP8L".utf8) && vp8l[20] == 0x2F)
        vp8l[21] = 0xFF; vp8l[22] = 0xFF; vp8l[23] = 0xFF; vp8l[24] |= 0x0F
        try expectTooLarge(vp8l, 16384, 16384)

        // GIF: a 65535×65535 logical screen (16-bit sides).
        var gif = Fixtures.bytes("formats/animated.gif")
        gif.replaceSubrange(6..<10, with: [0xFF, 0xFF, 0xFF, 0xFF])
        try expectTooLarge(gif, 65535, 65535)
        // A first frame far larger than its small screen: the frame bounds the work.
        var frame = Fixtures.bytes("formats/animated.gif")
        let descriptor = try #require((0..<frame.count - 9).first { frame[$0] == 0x2C })
        frame.replaceSubrange(descriptor + 5..<descriptor + 9, with: [0xFF, 0xFF, 0xFF, 0xFF])
        try expectTooLarge(frame, 65535, 65535)

        // HEIC and AVIF: every ispe claiming 100000×100000 — over libheif's and
        // libavif's own limits, which they report while parsing.
        for name in ["crowd_1440x960.heic", "photo-alpha.avif"] {
            var heif = Fixtures.bytes("formats/\(name)")
            let boxes = (0..<heif.count - 16).filter { Array(heif[$0..<$0 + 4]) == Array("ispe".utf8) }
            #expect(!boxes.isEmpty)
            for box in boxes { heif.replaceSubrange(box + 8..<box + 16, with: [0, 1, 0x86, 0xA0, 0, 1, 0x86, 0xA0]) }
            try expectTooLarge(heif, 100_000, 100_000)
        }
        // Within libheif's limit but over maxPixels: refused after parsing, before decoding.
        #expect(throws: CodecError.tooLarge(width: 1440, height: 960)) {
            try ImageDecoder.probe(Fixtures.bytes("formats/crowd_1440x960.heic"), maxPixels: 1_000_000)
        }
    }

    private func expectTooLarge(_ data: [UInt8], _ width: Int, _ height: Int,
                                sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(throws: CodecError.tooLarge(width: width, height: height), sourceLocation: sourceLocation) {
            try ImageDecoder.probe(data, maxPixels: 50_000_000)
        }
        var sink = CountingSink()
        #expect(throws: CodecError.self, sourceLocation: sourceLocation) {
            try ImageDecoder.decode(data, header: ImageDecoder.probe(data, maxPixels: 50_000_000),
                                    minimumDisplayedSize: nil, into: &sink)
        }
        #expect(sink.begun == 0 && sink.rows == 0, sourceLocation: sourceLocation)
    }

    @Test func otherContainersAreUnsupported() {
        #expect(throws: CodecError.unsupportedFormat("not a PNG, JPEG, WebP, GIF, AVIF or HEIC image")) {
            try ImageDecoder.probe([0, 0, 0, 0x14] + Array("ftypmp42".utf8) + [0, 0, 0, 0] + Array("isom".utf8), maxPixels: 100)
        }
        #expect(throws: CodecError.unsupportedFormat("not a PNG, JPEG, WebP, GIF, AVIF or HEIC image")) {
            try ImageDecoder.probe(Array("BM".utf8) + [UInt8](repeating: 0, count: 60), maxPixels: 100)
        }
    }
}
