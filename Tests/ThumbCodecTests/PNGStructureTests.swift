import CThumbCodec
import Testing
@testable import ThumbCodec
import ThumbImaging

/// The PNG chunk walk (PNGStructure, SourcesAndLimits.md § Structure
/// limits): PNGs made here from PNGBomb's pieces (a 100×100 RGB IHDR).
@Suite struct PNGStructureTests {
    static let image = PNGBomb.chunk("IDAT", PNGBomb.zlib(inflatedBytes: 30_100)) + PNGBomb.chunk("IEND", [])

    /// IHDR, `chunks`, then the image data.
    static func png(_ chunks: [[UInt8]]) -> [UInt8] {
        var out = PNGBomb.signature + PNGBomb.ihdr
        for chunk in chunks { out += chunk }
        return out + image
    }

    static func zTXt(inflating bytes: Int) -> [UInt8] {
        PNGBomb.chunk("zTXt", Array("Comment\u{0}\u{0}".utf8) + PNGBomb.zlib(inflatedBytes: bytes))
    }

    /// What zlib(inflatedBytes:) inflates to: 1 + 258·k bytes, k ≥ 1.
    static func inflated(_ bytes: Int) -> Int { 1 + 258 * max(1, (bytes - 1 + 257) / 258) }

    // MARK: Issue 19 item 6: libpng's inflated text

    /// 256 zTXt chunks that each inflate to 4 MB: 1 GiB of text libpng held
    /// in every probe and decode of the image. (zlib -9 makes each ~4 KB;
    /// PNGBomb's fixed-Huffman stream ~25 KB.)
    @Test func twoHundredFiftySixZTXtBombsAreRefused() {
        let bomb = Self.zTXt(inflating: 4_000_000)
        #expect(bomb.count < 30_000)
        let png = Self.png(Array(repeating: bomb, count: 256))
        #expect(throws: CodecError.tooComplex("PNG ancillary chunks inflate to more than 16 MiB")) {
            try ImageDecoder.probe(png, maxPixels: 1 << 20)
        }
    }

    /// The total counts zTXt, compressed iTXt and iCCP alike, up to the limit
    /// inclusive; uncompressed text is its own size and not counted.
    @Test func theInflatedTotalCountsEveryCompressedChunk() throws {
        let limit = PNGStructure.maxInflatedAncillaryBytes
        #expect(limit == 16 << 20)
        let iTXt = PNGBomb.chunk("iTXt", Array("XML:com.adobe.xmp\u{0}\u{1}\u{0}en\u{0}\u{0}".utf8)
                                 + PNGBomb.zlib(inflatedBytes: 4 << 20))
        let plainITXt = PNGBomb.chunk("iTXt", Array("Comment\u{0}\u{0}\u{0}\u{0}\u{0}".utf8)
                                      + PNGBomb.zlib(inflatedBytes: 64 << 20))   // not compressed: bytes, not a stream
        let iCCP = PNGBomb.chunk("iCCP", Array("icc\u{0}\u{0}".utf8) + PNGBomb.zlib(inflatedBytes: 4 << 20))
        // Three chunks of 4 MiB, then a zTXt of the largest size
        // zlib(inflatedBytes:) makes (1 + 258·k bytes) that still fits.
        let used = 3 * Self.inflated(4 << 20)
        let last = (limit - used - 1) / 258 * 258 + 1
        let chunks = [iTXt, plainITXt, iCCP, Self.zTXt(inflating: 4 << 20), Self.zTXt(inflating: last)]
        #expect(try ImageDecoder.decodeBitmap(Self.png(chunks), maxPixels: 1 << 20).bitmap.width == 100)
        let over = Self.png(chunks + [Self.zTXt(inflating: 1)])
        #expect(throws: CodecError.tooComplex("PNG ancillary chunks inflate to more than 16 MiB")) {
            try StructureWalk.check(over, format: .png)
        }
    }

    /// An iCCP counts as far as libpng would inflate it (its 4 MiB cap): a
    /// 1 GiB profile bomb alone is ignored as before (IgnoredProfileTests),
    /// beside 12 MiB of text it passes the limit.
    @Test func anICCPCountsWhatLibpngInflatesOfIt() throws {
        let iCCP = PNGBomb.chunk("iCCP", Array("icc\u{0}\u{0}".utf8) + PNGBomb.zlib(inflatedBytes: 1 << 30))
        #expect(try ImageDecoder.decodeBitmap(Self.png([iCCP]), maxPixels: 1 << 20).bitmap.width == 100)
        #expect(throws: CodecError.tooComplex("PNG ancillary chunks inflate to more than 16 MiB")) {
            try ImageDecoder.probe(Self.png([iCCP, Self.zTXt(inflating: 12 << 20)]), maxPixels: 1 << 20)
        }
    }

    /// Chunks after the image data are never read (API.md § Output
    /// "Strictness"), so the walk does not count them either.
    @Test func chunksAfterTheImageDataAreNotWalked() throws {
        let bomb = Self.zTXt(inflating: 4_000_000)
        let png = PNGBomb.signature + PNGBomb.ihdr + PNGBomb.chunk("IDAT", PNGBomb.zlib(inflatedBytes: 30_100))
            + [UInt8](Array(repeating: bomb, count: 256).joined()) + PNGBomb.chunk("IEND", [])
        #expect(try ImageDecoder.decodeBitmap(png, maxPixels: 1 << 20).bitmap.width == 100)
    }

    @Test func ancillaryChunksBeforeTheImageDataAreCounted() throws {
        let limit = PNGStructure.maxAncillaryChunks
        let text = PNGBomb.chunk("tEXt", Array("Comment\u{0}hi".utf8))
        let atLimit = Self.png(Array(repeating: text, count: limit))
        #expect(try ImageDecoder.decodeBitmap(atLimit, maxPixels: 1 << 20).bitmap.width == 100)
        let over = Self.png(Array(repeating: PNGBomb.chunk("zzZz", []), count: limit + 1))
        #expect(throws: CodecError.tooComplex("PNG has more than 4096 ancillary chunks before its image data")) {
            try StructureWalk.check(over, format: .png)
        }
    }

    // MARK: Malformed chunks

    @Test func aChunkPastTheEndIsCorrupt() {
        let claim = PNGBomb.signature + PNGBomb.ihdr + PNGBomb.be32(1000) + Array("tEXt".utf8) + [UInt8](repeating: 0x41, count: 990)
        #expect(throws: CodecError.corrupt("PNG chunk extends past the end of the data (truncated)")) {
            try StructureWalk.check(claim, format: .png)
        }
        let huge = PNGBomb.signature + PNGBomb.ihdr + PNGBomb.be32(0xFFFF_FFFF) + Array("zTXt".utf8) + [UInt8](repeating: 0, count: 8)
        #expect(throws: CodecError.corrupt("PNG chunk extends past the end of the data (truncated)")) {
            try StructureWalk.check(huge, format: .png)
        }
        // Every cut of a small real PNG: refused as truncated, or left to libpng.
        let real = Fixtures.bytes("pngsuite/ctzn0g04.png")   // zTXt and iTXt
        for cut in 0..<real.count {
            do { try StructureWalk.check(Array(real[..<cut]), format: .png) } catch {
                #expect(error == .corrupt("PNG chunk extends past the end of the data (truncated)"), "cut at \(cut)")
            }
        }
    }

    /// Zero-length and malformed compressed chunks hold no stream: nothing to
    /// count, and libpng (which skips text) decides about the rest.
    @Test func malformedCompressedChunksCountNothing() throws {
        let shapes: [[UInt8]] = [
            PNGBomb.chunk("zTXt", []), PNGBomb.chunk("iCCP", []), PNGBomb.chunk("iTXt", []),
            PNGBomb.chunk("zTXt", Array("no terminator".utf8)),
            PNGBomb.chunk("zTXt", Array("k\u{0}".utf8)),                  // no method byte
            PNGBomb.chunk("zTXt", Array("k\u{0}\u{0}".utf8) + [0x78, 0x9C, 0xFF, 0xFF]),   // bad stream
            PNGBomb.chunk("iTXt", Array("k\u{0}\u{1}\u{0}en".utf8)),     // cut before the translated keyword
            PNGBomb.chunk("iTXt", Array("k\u{0}\u{1}\u{0}\u{0}\u{0}".utf8)),   // empty stream
        ]
        for shape in shapes {
            try StructureWalk.check(Self.png(Array(repeating: shape, count: 100)), format: .png)
        }
        // A truncated stream counts what it inflated before the cut.
        let cut = Array(PNGBomb.zlib(inflatedBytes: 1 << 30).prefix(100_000))
        #expect(inflatedLength(cut, limit: 1 << 30) > 1 << 20)
        let empty: [UInt8] = []
        #expect(inflatedLength(empty, limit: 100) == 0)
    }

    @Test func nonPNGBytesAndShortFilesAreLeftToLibpng() throws {
        for bytes: [UInt8] in [[], Array(PNGBomb.signature.prefix(7)), PNGBomb.signature, PNGBomb.signature + [0, 0, 0, 13],
                               Array("GIF89a".utf8), PNGBomb.signature + PNGBomb.ihdr.prefix(11)] {
            try StructureWalk.check(bytes, format: .png)
        }
    }
}

/// The C counter the walk uses, over an array.
func inflatedLength(_ bytes: [UInt8], limit: Int) -> Int {
    bytes.withUnsafeBytes { thumbd_inflated_length($0.baseAddress, $0.count, limit) }
}
