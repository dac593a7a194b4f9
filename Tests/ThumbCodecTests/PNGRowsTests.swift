import Testing
import ThumbCodec
import ThumbImaging

/// The PNG image data through libspng (png_rows.c) where libspng 0.7.3 and
/// libpng would differ, answering as libpng did: tRNS as libpng accepted it,
/// 16-bit tRNS matched on all 16 bits, a bad CRC on an IDAT before the last
/// row, and image data cut short.
@Suite struct PNGRowsTests {
    /// A zlib stream of `data` in stored blocks, with its Adler-32.
    static func stored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var rest = data[...]
        repeat {
            let piece = rest.prefix(65535)
            rest = rest.dropFirst(piece.count)
            let n = UInt16(piece.count)
            out += [rest.isEmpty ? 1 : 0, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8(~n >> 8)] + piece
        } while !rest.isEmpty
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
        return out + PNGBomb.be32(b << 16 | a)
    }

    static func png(width: UInt32, height: UInt32, depth: UInt8, colour: UInt8, rows: [UInt8],
                    extra: [[UInt8]] = []) -> [UInt8] {
        let ihdr = PNGBomb.chunk("IHDR", PNGBomb.be32(width) + PNGBomb.be32(height) + [depth, colour, 0, 0, 0])
        return PNGBomb.signature + ihdr + Array(extra.joined()) + PNGBomb.chunk("IDAT", stored(rows))
            + PNGBomb.chunk("IEND", [])
    }

    private func alphas(_ png: [UInt8]) throws -> [UInt8] {
        let bitmap = try ImageDecoder.decodeBitmap(png, maxPixels: 1 << 20).bitmap
        return stride(from: 3, to: bitmap.pixels.count, by: 4).map { bitmap.pixels[$0] }
    }

    /// An 8-bit RGB tRNS colour over 255 matches no pixel in libpng; libspng
    /// would mask it to 8 bits and make black transparent.
    @Test func anRGBTransparentColourOutOfRangeMatchesNothing() throws {
        let rows: [UInt8] = [0, 0, 0, 0, 1, 0, 0]   // black, then (1, 0, 0)
        let outOfRange = Self.png(width: 2, height: 1, depth: 8, colour: 2, rows: rows,
                                  extra: [PNGBomb.chunk("tRNS", [1, 0, 0, 0, 0, 0])])
        #expect(try alphas(outOfRange) == [255, 255])
        let black = Self.png(width: 2, height: 1, depth: 8, colour: 2, rows: rows,
                             extra: [PNGBomb.chunk("tRNS", [0, 0, 0, 0, 0, 0])])
        #expect(try alphas(black) == [0, 255])
    }

    /// 16-bit grey 0x1234 is transparent, 0x12FF not, though both keep 0x12.
    @Test func aSixteenBitTransparentGreyMatchesAllSixteenBits() throws {
        let png = Self.png(width: 2, height: 1, depth: 16, colour: 0, rows: [0, 0x12, 0x34, 0x12, 0xFF],
                           extra: [PNGBomb.chunk("tRNS", [0x12, 0x34])])
        let bitmap = try ImageDecoder.decodeBitmap(png, maxPixels: 1 << 20).bitmap
        #expect(bitmap.pixels == [0x12, 0x12, 0x12, 0, 0x12, 0x12, 0x12, 255])
    }

    /// A bad CRC on an IDAT that is not the last is corrupt, as the one
    /// holding the last row is (DecoderBombTests); data cut inside the image
    /// data is truncated.
    @Test func aBadCRCOnAnEarlierIDATAndCutDataAreCorrupt() throws {
        let rows = [UInt8]((0..<100).flatMap { _ in [0] + [UInt8](repeating: 0x80, count: 300) })
        let stream = Self.stored(rows)
        let half = stream.count / 2
        var first = PNGBomb.chunk("IDAT", Array(stream[..<half]))
        let good = PNGBomb.signature + PNGBomb.ihdr + first + PNGBomb.chunk("IDAT", Array(stream[half...]))
            + PNGBomb.chunk("IEND", [])
        #expect(try ImageDecoder.decodeBitmap(good, maxPixels: 1 << 20).bitmap.pixels[0] == 0x80)
        first[first.count - 1] ^= 0xFF
        let broken = PNGBomb.signature + PNGBomb.ihdr + first + PNGBomb.chunk("IDAT", Array(stream[half...]))
            + PNGBomb.chunk("IEND", [])
        #expect(throws: CodecError.corrupt("IDAT: CRC error")) { try ImageDecoder.decodeBitmap(broken, maxPixels: 1 << 20) }
        #expect(throws: CodecError.corrupt("PNG data ends early (truncated)")) {
            try ImageDecoder.decodeBitmap(Array(good[..<(good.count - 12 - 4 - 100)]), maxPixels: 1 << 20)
        }
    }
}
