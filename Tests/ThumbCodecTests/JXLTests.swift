import Foundation
import Testing
import ThumbCodec
import ThumbImaging
import ThumbTestSupport

/// JPEG XL with the real libjxl 0.7: thumbd's encoder checked by libjxl's own
/// `djxl` (libjxl-tools), its probe and decoder on files `cjxl` wrote
/// (Fixtures/SOURCES.md § JPEG XL), and the hostile shapes SPEC §6 names.
@Suite struct JXLTests {
    private static let limit = 1 << 24

    /// rocket.jpg's pixels (640×427), or the same with a soft alpha ramp and a clear hole.
    private func photo(alpha: Bool) throws -> Bitmap {
        var bitmap = try ImageDecoder.decodeBitmap(Fixtures.bytes("rocket.jpg"), maxPixels: Self.limit).bitmap
        guard alpha else { return bitmap }
        for y in 0..<bitmap.height {
            for x in 0..<bitmap.width {
                let inHole = (x - 300) * (x - 300) + (y - 200) * (y - 200) < 60 * 60
                bitmap.pixels[(y * bitmap.width + x) * 4 + 3] = inHole ? 0 : UInt8(x * 255 / (bitmap.width - 1))
            }
        }
        return bitmap
    }

    private func decode(_ jxl: [UInt8]) throws -> (bitmap: Bitmap, header: ImageHeader) {
        try ImageDecoder.decodeBitmap(jxl, maxPixels: Self.limit, allowJPEGXL: true)
    }

    /// `djxl` (libjxl-tools 0.7, one thread) decodes `jxl` to a PNG, which
    /// thumbd's PNG decoder (libpng) reads back: an independent route to the pixels.
    /// Colour compared premultiplied, where a viewer sees it.
    private func visiblePSNR(_ a: Bitmap, _ b: Bitmap) -> Double {
        func premultiplied(_ bitmap: Bitmap) -> Bitmap {
            var out = bitmap
            for i in stride(from: 0, to: out.pixels.count, by: 4) {
                let a = Int(out.pixels[i + 3])
                for c in 0..<3 { out.pixels[i + c] = UInt8((Int(out.pixels[i + c]) * a + 127) / 255) }
            }
            return out
        }
        return BitmapPSNR.rgb(premultiplied(a), premultiplied(b))
    }

    @Test func encodesABareCodestreamThatDjxlAndThumbdDecodeClosely() throws {
        let bitmap = try photo(alpha: false)
        let jxl = try JXLEncoder.encode(bitmap, quality: 80)
        #expect(Array(jxl[0..<2]) == [0xFF, 0x0A], "a bare codestream: no container, so no Exif or XMP box")
        #expect(ImageFormat.sniff(jxl) == .jxl)
        let reference = try Djxl.decode(jxl)
        #expect(reference.width == bitmap.width && reference.height == bitmap.height && reference.isOpaque)
        let referencePSNR = BitmapPSNR.rgb(reference, bitmap)
        #expect(referencePSNR >= 30, "djxl's decode: \(referencePSNR) dB")
        let (back, header) = try decode(jxl)
        #expect(header.format == .jxl && !header.hasAlpha && header.frames == 1 && header.orientation == .up)
        #expect(header.width == bitmap.width && header.height == bitmap.height && header.bitDepth == 8)
        #expect(BitmapPSNR.rgb(back, bitmap) >= 30, "thumbd's decode: \(BitmapPSNR.rgb(back, bitmap)) dB")
        #expect(BitmapPSNR.rgb(back, reference) >= 45, "both decoders give the same sRGB pixels")
    }

    @Test func keepsTranslucencyAndWritesNoAlphaForAnOpaqueBitmap() throws {
        let bitmap = try photo(alpha: true)
        let jxl = try JXLEncoder.encode(bitmap, quality: 80)
        let (back, header) = try decode(jxl)
        #expect(header.hasAlpha)
        // libjxl 0.7 codes alpha with the frame's own settings (no separate alpha distance): near, not exact.
        let alphaError = (0..<(back.width * back.height)).map { abs(Int(back.pixels[$0 * 4 + 3]) - Int(bitmap.pixels[$0 * 4 + 3])) }
        #expect(BitmapPSNR.alpha(back, bitmap) >= 45 && alphaError.max()! <= 24, "alpha \(BitmapPSNR.alpha(back, bitmap)) dB, worst \(alphaError.max()!)")
        #expect(back[300, 200].a == 0 && back[639, 10].a >= 250, "the hole stays clear, the opaque edge opaque")
        #expect(visiblePSNR(back, bitmap) >= 30)
        let reference = try Djxl.decode(jxl)
        #expect(BitmapPSNR.alpha(reference, back) == .infinity, "djxl reads the same alpha")
        #expect(visiblePSNR(reference, bitmap) >= 30)
        let opaque = try JXLEncoder.encode(try photo(alpha: false), quality: 80)
        #expect(try decode(opaque).header.hasAlpha == false)
    }

    /// A higher `q` (through `QualityScale.jxl`'s distances) gives a larger, closer file.
    @Test func qualityMapsToSize() throws {
        let bitmap = try photo(alpha: false)
        let low = try JXLEncoder.encode(bitmap, quality: 40), high = try JXLEncoder.encode(bitmap, quality: 95)
        #expect(low.count < high.count)
        #expect(BitmapPSNR.rgb(try decode(low).bitmap, bitmap) < BitmapPSNR.rgb(try decode(high).bitmap, bitmap))
    }

    @Test func tinyAndOddSizedBitmapsEncode() throws {
        for (w, h) in [(1, 1), (3, 1), (1, 5), (17, 9)] {
            var bitmap = Bitmap(width: w, height: h)
            for i in 0..<(w * h) { bitmap.pixels[i * 4] = 200; bitmap.pixels[i * 4 + 3] = 255 }
            let back = try decode(try JXLEncoder.encode(bitmap, quality: 80)).bitmap
            #expect(back.width == w && back.height == h && back.isOpaque)
            #expect(abs(Int(back[0, 0].r) - 200) < 12)
        }
    }

    /// The same cjxl codestream bare and in the container (`--container=1`).
    @Test func probesAndDecodesTheBareCodestreamAndTheContainer() throws {
        let bare = Fixtures.bytes("jxl/photo.jxl"), boxed = Fixtures.bytes("jxl/photo-container.jxl")
        #expect(Array(boxed[0..<12]) == [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A])
        var bitmaps: [Bitmap] = []
        for file in [bare, boxed] {
            #expect(ImageFormat.sniff(file) == .jxl)
            let header = try ImageDecoder.probe(file, maxPixels: Self.limit, allowJPEGXL: true)
            #expect(header.format == .jxl && header.width == 160 && header.height == 107)
            #expect(!header.hasAlpha && header.frames == 1 && !header.isAnimated && header.orientation == .up)
            #expect(FrameCount.of(file, format: .jxl) == 1)
            bitmaps.append(try decode(file).bitmap)
        }
        #expect(bitmaps[0].pixels == bitmaps[1].pixels)
        // cjxl's input: rocket.jpg at 1/4 by djpeg.
        let source = Fixtures.ppm("jxl/rocket-160.ppm")
        #expect(Fixtures.meanDifference(bitmaps[0], rgb: source.rgb) < 4)
    }

    @Test func isReadOnlyWhenAllowed() throws {
        let bare = Fixtures.bytes("jxl/photo.jxl")
        #expect(throws: CodecError.unsupportedFormat("not a PNG, JPEG, WebP, GIF, AVIF or HEIC image")) {
            try ImageDecoder.probe(bare, maxPixels: Self.limit)
        }
        #expect(throws: CodecError.self) { try ImageDecoder.decodeBitmap(bare, maxPixels: Self.limit) }
    }

    /// cjxl put orient-6.png's eXIf orientation into the codestream: the
    /// pixels come stored, and the orientation turns them upright.
    @Test func reportsTheCodestreamOrientationAndLeavesTurningToThumbd() throws {
        let (stored, header) = try decode(Fixtures.bytes("jxl/orient-6.jxl"))
        #expect(header.orientation == .right && header.width == 24 && header.height == 32)
        #expect(header.displayedWidth == 32 && header.displayedHeight == 24)
        let upright = stored.oriented(header.orientation)
        let reference = try ImageDecoder.decodeBitmap(Fixtures.bytes("orient/upright.png"), maxPixels: Self.limit).bitmap
        #expect(upright.width == reference.width && upright.height == reference.height)
        #expect(BitmapPSNR.rgb(upright, reference) > 25, "quadrants in place")
    }

    /// Frames counted from libjxl's frame events, without pixels; the first decoded.
    @Test func countsTheFramesOfAnAnimationAndDecodesTheFirst() throws {
        let jxl = JXLWriter.animation(width: 16, height: 8, colors: [(250, 0, 0), (0, 0, 250), (0, 250, 0)])
        let header = try ImageDecoder.probe(jxl, maxPixels: Self.limit, allowJPEGXL: true)
        #expect(header.frames == 3 && header.isAnimated && FrameCount.of(jxl, format: .jxl) == 3)
        #expect(header.animation == nil, "no animated output from JPEG XL: its first frame in every format")
        let first = try decode(jxl).bitmap
        #expect(first.width == 16 && first.height == 8 && first[5, 5].r > 230 && first[5, 5].b < 25)
        // A tail cut inside the last frame: its header may stand, the first frame decodes.
        let cut = Array(jxl.dropLast(4))
        #expect((2...3).contains(try ImageDecoder.probe(cut, maxPixels: Self.limit, allowJPEGXL: true).frames))
        #expect(try decode(cut).bitmap[5, 5].r > 230)
    }

    /// A codestream whose SizeHeader claims 100 000 × 100 000 and nothing
    /// after its metadata: refused from the basic info, before any frame.
    @Test func aHugeHeaderIsTooLargeBeforeAnyPixel() throws {
        var bits = JXLBits()
        bits.put(0, 1)                          // SizeHeader.small: no
        bits.put(2, 2); bits.put(99_999, 18)    // height − 1 in the 18-bit distribution
        bits.put(0, 3)                          // ratio: none, so a width follows
        bits.put(2, 2); bits.put(99_999, 18)    // width − 1
        bits.put(1, 1)                          // ImageMetadata: all default
        bits.put(1, 1)                          // CustomTransformData: all default
        let file: [UInt8] = [0xFF, 0x0A] + bits.bytes + [UInt8](repeating: 0, count: 16)
        #expect(throws: CodecError.tooLarge(width: 100_000, height: 100_000)) {
            try ImageDecoder.probe(file, maxPixels: 50_000_000, allowJPEGXL: true)
        }
    }

    @Test func truncatedDataIsCorrupt() throws {
        let bare = Fixtures.bytes("jxl/photo.jxl"), boxed = Fixtures.bytes("jxl/photo-container.jxl")
        // The header is whole, the frame is not: the probe stands, the decode fails.
        let half = Array(bare[..<(bare.count / 2)])
        #expect(try ImageDecoder.probe(half, maxPixels: Self.limit, allowJPEGXL: true).width == 160)
        #expect { try decode(half) } throws: { error in
            if case CodecError.corrupt = error { return true } else { return false }
        }
        for cut in [Array(bare[..<3]), Array(boxed[..<60]), Array(boxed.dropLast(100))] {
            #expect { try decode(cut) } throws: { error in
                if case CodecError.corrupt = error { return true } else { return false }
            }
        }
    }
}

/// JPEG XL's bit order: fields packed from each byte's least significant bit.
struct JXLBits {
    private(set) var bytes: [UInt8] = []
    private var used = 8

    mutating func put(_ value: Int, _ count: Int) {
        for i in 0..<count {
            if used == 8 { bytes.append(0); used = 0 }
            bytes[bytes.count - 1] |= UInt8((value >> i) & 1) << used
            used += 1
        }
    }
}
