import Testing
import ThumbCodec
import ThumbImaging

@Suite struct BadInputTests {
    @Test func emptyAndGarbageAreTypedErrors() {
        #expect(throws: CodecError.empty) { try ImageDecoder.probe([], maxPixels: 100) }
        #expect(throws: CodecError.unsupportedFormat("not a PNG, JPEG, WebP, GIF, AVIF or HEIC image")) {
            try ImageDecoder.probe(Array("II*\u{0}....".utf8), maxPixels: 100)   // TIFF
        }
        // Right magic, nothing behind it.
        #expect(throws: CodecError.self) { try ImageDecoder.probe([0xFF, 0xD8, 0xFF], maxPixels: 100) }
        #expect(throws: CodecError.self) { try ImageDecoder.probe([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], maxPixels: 100) }
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let junk = [0xFF, 0xD8, 0xFF] + (0..<Int.random(in: 0...600, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            #expect(throws: CodecError.self) { try ImageDecoder.decodeBitmap(junk, maxPixels: 1 << 20) }
        }
    }

    /// A 30000×30000 header is refused by the probe. Decoding needs the
    /// `ImageHeader` only `probe` can make (it has no public initialiser), so
    /// refusing in `probe` means no pixel buffer is ever allocated for it.
    @Test func oversizedHeadersAreRefusedByTheProbe() throws {
        var jpeg = Fixtures.bytes("testorig.jpg")
        let sof = try #require((2..<jpeg.count - 1).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        jpeg[sof + 5] = 0x75; jpeg[sof + 6] = 0x30      // height 30000
        jpeg[sof + 7] = 0x75; jpeg[sof + 8] = 0x30      // width 30000
        #expect(throws: CodecError.tooLarge(width: 30000, height: 30000)) {
            try ImageDecoder.probe(jpeg, maxPixels: 50_000_000)
        }

        var png = Fixtures.bytes("pngsuite/basn2c08.png")
        png.replaceSubrange(16..<24, with: [0, 0, 0x75, 0x30, 0, 0, 0x75, 0x30])
        let crc = CRC32.checksum(png[12..<29])
        png.replaceSubrange(29..<33, with: [UInt8(crc >> 24), UInt8(crc >> 16 & 255), UInt8(crc >> 8 & 255), UInt8(crc & 255)])
        #expect(throws: CodecError.tooLarge(width: 30000, height: 30000)) {
            try ImageDecoder.probe(png, maxPixels: 50_000_000)
        }
        // With a fixed CRC the header itself is valid: only the limit refuses it.
        #expect(try ImageDecoder.probe(png, maxPixels: 900_000_000).width == 30000)

        var sink = CountingSink()
        #expect(throws: CodecError.self) {
            let header = try ImageDecoder.probe(png, maxPixels: 50_000_000)
            try ImageDecoder.decode(png, header: header, minimumDisplayedSize: nil, into: &sink)
        }
        #expect(sink.begun == 0 && sink.rows == 0)
    }

    /// Found by the fuzzer: a tEXt chunk claiming 2 GiB in a 495-byte file made
    /// libpng allocate 2 GiB before noticing the data was missing.
    @Test func aChunkClaimingMoreThanTheFileIsRefusedBeforeLibpngAllocates() {
        #expect(throws: CodecError.corrupt("PNG chunk extends past the end of the data (truncated)")) {
            try ImageDecoder.probe(Fixtures.bytes("fuzz/png-huge-chunk.png"), maxPixels: 1 << 20)
        }
    }

    @Test func aCorruptStreamNeverReachesTheSinkPastTheError() {
        var png = Fixtures.bytes("pngsuite/basn2c08.png")
        png[png.count / 2] ^= 0xFF                       // breaks the IDAT CRC
        var sink = CountingSink()
        #expect(throws: CodecError.self) {
            let header = try ImageDecoder.probe(png, maxPixels: 1 << 20)
            try ImageDecoder.decode(png, header: header, minimumDisplayedSize: nil, into: &sink)
        }
        #expect(sink.rows < 32)
    }
}

/// CRC-32 (ISO-HDLC) for patching PNG chunks in tests.
enum CRC32 {
    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
