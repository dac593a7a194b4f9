import Foundation
import Testing
import ThumbCodec
import ThumbImaging

/// Inputs whose header does not justify the work they ask for (API.md § Output
/// "Strictness", Configuration.md `maxRenderSeconds`): decoders stop where the
/// image ends, and refuse scan bombs and oversized frames up front.
@Suite struct DecoderBombTests {
    // MARK: PNG

    /// A 100×100 8-bit RGB PNG whose IDAT inflates to about 1 GiB of zeros
    /// (the 12 GB bomb, smaller). libpng on its own inflates all of it
    /// after the last row (seconds); thumbd stops at the last row.
    @Test func aPNGDecompressionBombStopsAtTheLastRow() throws {
        let png = PNGBomb.png(inflatedBytes: 1 << 30, chunkBytes: 1 << 20)
        #expect(png.count > 6_000_000 && png.count < 8_000_000)
        let ((bitmap, header), seconds) = try threadCPUSeconds { try ImageDecoder.decodeBitmap(png, maxPixels: 1 << 20) }
        #expect(header.width == 100 && header.height == 100)
        #expect(bitmap.pixels.count == 100 * 100 * 4)
        #expect(stride(from: 0, to: bitmap.pixels.count, by: 4).allSatisfy {
            bitmap.pixels[$0] == 0 && bitmap.pixels[$0 + 1] == 0 && bitmap.pixels[$0 + 2] == 0 && bitmap.pixels[$0 + 3] == 255
        })
        // Inflating 1 GiB takes seconds; reading 100 rows takes microseconds.
        #expect(seconds < 1.0, "decoding took \(seconds) s of CPU")
    }

    /// What follows the last row is not read: an IDAT chunk after the one that
    /// held the last row may be broken (bad CRC) without failing the image.
    @Test func chunksAfterTheLastRowAreNotRead() throws {
        let stream = PNGBomb.zlib(inflatedBytes: 1 << 20)
        let cut = 1000   // 1000 bytes of this stream inflate to ~160 KB, over the image's 30100
        var trailing = PNGBomb.chunk("IDAT", Array(stream[cut...]))
        trailing[trailing.count - 1] ^= 0xFF
        let png = PNGBomb.signature + PNGBomb.ihdr + PNGBomb.chunk("IDAT", Array(stream[..<cut])) + trailing
            + PNGBomb.chunk("IEND", [])
        let (bitmap, _) = try ImageDecoder.decodeBitmap(png, maxPixels: 1 << 20)
        #expect(bitmap.width == 100 && bitmap.pixels[0] == 0 && bitmap.pixels[3] == 255)

        // So is a broken IEND, or compressed data that is garbage past the image.
        var iend = PNGBomb.chunk("IEND", [])
        iend[iend.count - 1] ^= 0xFF
        let garbage = Array(stream[..<cut]) + [UInt8](repeating: 0xFF, count: 64)
        let tail = PNGBomb.signature + PNGBomb.ihdr + PNGBomb.chunk("IDAT", garbage) + iend
        #expect(try ImageDecoder.decodeBitmap(tail, maxPixels: 1 << 20).bitmap.height == 100)
    }

    /// The chunk holding the last row is still checked (libpng had not reached
    /// its CRC when thumbd stopped reading).
    @Test func aBadCRCOnTheChunkHoldingTheLastRowIsCorrupt() {
        var png = PNGBomb.png(inflatedBytes: 1 << 20, chunkBytes: 1 << 20)
        let iendStart = png.count - 12
        png[iendStart - 1] ^= 0xFF   // the last byte of the IDAT's CRC
        #expect(throws: CodecError.corrupt("IDAT: CRC error")) { try ImageDecoder.decodeBitmap(png, maxPixels: 1 << 20) }
    }

    /// libpng only warns about a bad CRC on an ancillary chunk and drops the
    /// chunk; API.md § Output wants any bad CRC before the last row refused.
    @Test func aBadCRCOnAnAncillaryChunkBeforeTheImageIsCorrupt() throws {
        let stream = PNGBomb.zlib(inflatedBytes: 30_100)
        var text = PNGBomb.chunk("tEXt", Array("Comment\u{0}hello".utf8))
        text[text.count - 1] ^= 0xFF
        let idat = PNGBomb.chunk("IDAT", stream)
        let before = PNGBomb.signature + PNGBomb.ihdr + text + idat + PNGBomb.chunk("IEND", [])
        #expect(throws: CodecError.self) { try ImageDecoder.decodeBitmap(before, maxPixels: 1 << 20) }
        // After the image data it is never read.
        let after = PNGBomb.signature + PNGBomb.ihdr + idat + text + PNGBomb.chunk("IEND", [])
        #expect(try ImageDecoder.decodeBitmap(after, maxPixels: 1 << 20).bitmap.width == 100)
    }

    /// Ancillary chunks cost at most the 4 MiB chunk cap: a larger one is
    /// skipped, and text is not inflated by libpng at all. Compressed text
    /// past the structure walk's limit is refused (PNGStructureTests).
    @Test func ancillaryChunksAreCapped() throws {
        let big = PNGBomb.chunk("tEXt", Array("Comment\u{0}".utf8) + [UInt8](repeating: 0x41, count: 5 << 20))
        let zipped = PNGBomb.chunk("zTXt", Array("Comment\u{0}\u{0}".utf8) + PNGBomb.zlib(inflatedBytes: 12 << 20))
        let png = PNGBomb.signature + PNGBomb.ihdr + big + zipped
            + PNGBomb.chunk("IDAT", PNGBomb.zlib(inflatedBytes: 30_100)) + PNGBomb.chunk("IEND", [])
        let (width, seconds) = try threadCPUSeconds { try ImageDecoder.decodeBitmap(png, maxPixels: 1 << 20).bitmap.width }
        #expect(width == 100)
        #expect(seconds < 1.0, "decoding took \(seconds) s of CPU")
    }

    /// The fuzzer's seeds of both shapes (made with Python's zlib and cjpeg, see SOURCES.md).
    @Test func theCommittedBombSeedsBehave() throws {
        #expect(try ImageDecoder.decodeBitmap(Fixtures.bytes("bombs/png-idat-bomb.png"), maxPixels: 1 << 20).bitmap.width == 100)
        #expect(throws: CodecError.corrupt("progressive JPEG has more than 100 scans")) {
            try ImageDecoder.decodeBitmap(Fixtures.bytes("bombs/jpeg-scan-bomb.jpg"), maxPixels: 1 << 20)
        }
    }

    // MARK: JPEG

    /// `black-2scans.jpg` (DC scan, one AC scan) with its last scan repeated:
    /// 100 scans decode, the 101st is corrupt (Configuration.md, as
    /// libjpeg-turbo's `djpeg -maxscans 100`).
    @Test func aProgressiveJPEGWithMoreThan100ScansIsCorrupt() throws {
        #expect(try ImageDecoder.decodeBitmap(ScanBomb.jpeg(scans: 100), maxPixels: 1 << 20).bitmap.width == 64)
        #expect(throws: CodecError.corrupt("progressive JPEG has more than 100 scans")) {
            try ImageDecoder.decodeBitmap(ScanBomb.jpeg(scans: 101), maxPixels: 1 << 20)
        }
        // Found as soon as the 101st scan starts: 10 000 scans cost no more.
        let bomb = ScanBomb.jpeg(scans: 10_000)
        let (_, seconds) = threadCPUSeconds {
            #expect(throws: CodecError.corrupt("progressive JPEG has more than 100 scans")) {
                try ImageDecoder.decodeBitmap(bomb, maxPixels: 1 << 20)
            }
        }
        #expect(seconds < 1.0, "decoding took \(seconds) s of CPU")
    }

    /// libjpeg refuses sides over 65500 itself ("Maximum supported image
    /// dimension"); that is a too-large image, not a corrupt one.
    @Test func aJPEGFrameOf65535SquaredIsTooLarge() throws {
        var jpeg = Fixtures.bytes("testorig.jpg")
        let sof = try #require((2..<jpeg.count - 1).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        jpeg.replaceSubrange(sof + 5..<sof + 9, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: CodecError.tooLarge(width: 65535, height: 65535)) {
            try ImageDecoder.probe(jpeg, maxPixels: 50_000_000)
        }
        #expect(throws: CodecError.tooLarge(width: 65535, height: 65535)) {
            try ImageDecoder.probe(jpeg, maxPixels: .max)
        }
    }

    /// A PNG side over 2^20 is too large, not corrupt (libpng's own user limit
    /// would only call the header invalid).
    @Test func aPNGSideOverTheLimitIsTooLarge() {
        var png = PNGBomb.signature + PNGBomb.ihdr + PNGBomb.chunk("IEND", [])
        png.replaceSubrange(8..<33, with: PNGBomb.chunk("IHDR", PNGBomb.be32(2_000_000) + PNGBomb.be32(1) + [8, 2, 0, 0, 0]))
        #expect(throws: CodecError.tooLarge(width: 2_000_000, height: 1)) { try ImageDecoder.probe(png, maxPixels: .max) }
    }
}

/// Builds the test PNGs: 100×100 8-bit RGB, all black, IDAT written by hand as
/// one fixed-Huffman deflate block of zeros (a literal 0, then length-258
/// distance-1 matches: 13 bits per 258 bytes) so any size is quick to make.
enum PNGBomb {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    static let ihdr = chunk("IHDR", be32(100) + be32(100) + [8, 2, 0, 0, 0])

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 255), UInt8(v >> 8 & 255), UInt8(v & 255)] }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return be32(UInt32(data.count)) + body + be32(FastCRC32.checksum(body))
    }

    /// The PNG with the stream split into IDAT chunks of `chunkBytes`.
    static func png(inflatedBytes: Int, chunkBytes: Int) -> [UInt8] {
        let stream = zlib(inflatedBytes: inflatedBytes)
        var out = signature + ihdr
        for start in stride(from: 0, to: stream.count, by: chunkBytes) {
            out += chunk("IDAT", Array(stream[start..<min(stream.count, start + chunkBytes)]))
        }
        return out + chunk("IEND", [])
    }

    /// A zlib stream of at least `inflatedBytes` zeros (1 + 258·k), with its Adler-32.
    static func zlib(inflatedBytes: Int) -> [UInt8] {
        let matches = max(1, (inflatedBytes - 1 + 257) / 258)
        var bits = BitWriter()
        bits.write(1, count: 1)                 // BFINAL
        bits.write(1, count: 2)                 // BTYPE 01: fixed Huffman
        bits.writeCode(0x30, count: 8)          // literal 0
        bits.writeMatch()                       // 11 + 13 bits: now byte-aligned
        var done = 1
        if matches - done >= 8 {
            var period = BitWriter()            // 8 matches = 104 bits = 13 bytes, repeated
            for _ in 0..<8 { period.writeMatch() }
            let pattern = period.bytes
            let repeats = (matches - done) / 8
            bits.bytes.reserveCapacity(bits.bytes.count + repeats * 13 + 16)
            for _ in 0..<repeats { bits.bytes += pattern }
            done += repeats * 8
        }
        while done < matches { bits.writeMatch(); done += 1 }
        bits.writeCode(0, count: 7)             // end of block
        let length = 1 + 258 * matches
        let adler = UInt32(length % 65521) << 16 | 1   // all zeros: a stays 1, b = length
        return [0x78, 0x01] + bits.finished + be32(adler)
    }

    struct BitWriter {
        var bytes: [UInt8] = []
        private var pending: UInt32 = 0
        private var pendingCount = 0

        /// LSB first, as deflate packs header fields.
        mutating func write(_ value: UInt32, count: Int) {
            for i in 0..<count { push(value >> i & 1) }
        }

        /// Huffman codes go MSB first.
        mutating func writeCode(_ code: UInt32, count: Int) {
            for i in stride(from: count - 1, through: 0, by: -1) { push(code >> i & 1) }
        }

        /// Length 258 (code 285, 8 bits) at distance 1 (code 0, 5 bits).
        mutating func writeMatch() {
            writeCode(0b1100_0101, count: 8)
            writeCode(0, count: 5)
        }

        private mutating func push(_ bit: UInt32) {
            pending |= bit << pendingCount
            pendingCount += 1
            if pendingCount == 8 {
                bytes.append(UInt8(pending))
                pending = 0
                pendingCount = 0
            }
        }

        var finished: [UInt8] { pendingCount > 0 ? bytes + [UInt8(pending)] : bytes }
    }
}

/// A table-driven CRC-32: the bomb's IDAT is megabytes.
enum FastCRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        table.withUnsafeBufferPointer { t in
            bytes.withUnsafeBufferPointer { b in
                var c: UInt32 = 0xFFFF_FFFF
                for byte in b { c = t[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
                return ~c
            }
        }
    }
}

/// `bombs/black-2scans.jpg` with its last scan (SOS and data) repeated before EOI.
enum ScanBomb {
    static func jpeg(scans: Int) -> [UInt8] {
        let base = Fixtures.bytes("bombs/black-2scans.jpg")
        let sos = (0..<base.count - 1).last { base[$0] == 0xFF && base[$0 + 1] == 0xDA }!
        let eoi = base.count - 2
        precondition(base[eoi] == 0xFF && base[eoi + 1] == 0xD9)
        let lastScan = Array(base[sos..<eoi])
        var out = Array(base[..<eoi])
        for _ in 0..<(scans - 2) { out += lastScan }
        return out + [0xFF, 0xD9]
    }
}
