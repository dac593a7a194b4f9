import Testing
import ThumbCodec
import ThumbImaging

/// The GIF rules where Pillow (the references' decoder) and browsers part
/// (Fixtures/animation/README.md), checked against pixels worked out by
/// hand; delays; and damage after the first frame. SPEC §14: disposal 2
/// clears to transparent, as browsers do.
@Suite struct AnimationGIFRulesTests {
    static let red: (UInt8, UInt8, UInt8) = (220, 20, 20)
    static let green: (UInt8, UInt8, UInt8) = (20, 200, 20)
    static let palette = [red, green]

    static func frames(_ bytes: [UInt8], maxFrames: Int = 100) throws -> [(bitmap: Bitmap, duration: Int)] {
        try AnimationDecoderTests.frames(bytes, maxFrames: maxFrames)
    }

    static func pixel(_ b: Bitmap, _ x: Int, _ y: Int) -> [UInt8] {
        let p = b[x, y]
        return [p.r, p.g, p.b, p.a]
    }

    static let clear: [UInt8] = [0, 0, 0, 0]
    static let redPixel: [UInt8] = [220, 20, 20, 255], greenPixel: [UInt8] = [20, 200, 20, 255]

    /// Pillow fills the background colour here; browsers, and thumbd, clear.
    @Test func disposal2WithoutATransparentIndexClearsToTransparent() throws {
        var gif = GIFWriter(width: 4, height: 2, palette: Self.palette)
        gif.frame(width: 4, height: 2, pixels: .run(0, count: 8), disposal: 2)
        gif.frame(width: 1, height: 1, pixels: .indices([1]), disposal: 1)
        let frames = try Self.frames(gif.finished)
        #expect(frames.count == 2)
        #expect(frames[0].bitmap.isOpaque)
        #expect(Self.pixel(frames[1].bitmap, 0, 0) == Self.greenPixel)
        for (x, y) in [(1, 0), (3, 0), (0, 1), (3, 1)] { #expect(Self.pixel(frames[1].bitmap, x, y) == Self.clear) }
    }

    /// Pillow keeps the previous frame's disposal for a frame that gives 0;
    /// 0 means "no disposal" to browsers, and to thumbd.
    @Test func disposal0AfterADisposal2KeepsItsFrame() throws {
        var gif = GIFWriter(width: 4, height: 2, palette: Self.palette)
        gif.frame(width: 2, height: 1, pixels: .run(0, count: 2), disposal: 2)
        gif.frame(x: 2, y: 0, width: 2, height: 1, pixels: .run(1, count: 2), disposal: 0)
        gif.frame(x: 3, y: 1, width: 1, height: 1, pixels: .indices([0]), disposal: 0)
        let last = try #require(try Self.frames(gif.finished).last).bitmap
        #expect(Self.pixel(last, 0, 0) == Self.clear && Self.pixel(last, 1, 0) == Self.clear)
        #expect(Self.pixel(last, 2, 0) == Self.greenPixel && Self.pixel(last, 3, 0) == Self.greenPixel)
        #expect(Self.pixel(last, 3, 1) == Self.redPixel && Self.pixel(last, 0, 1) == Self.clear)
    }

    /// The screen starts transparent (Pillow shows colour 0 there), and a
    /// frame past its edge is cut (Pillow grows its canvas).
    @Test func anUncoveredScreenIsTransparentAndAFramePastItsEdgeIsCut() throws {
        var gif = GIFWriter(width: 4, height: 3, palette: Self.palette)
        gif.frame(x: 1, y: 1, width: 2, height: 1, pixels: .run(0, count: 2))
        gif.frame(x: 3, y: 2, width: 3, height: 3, pixels: .run(1, count: 9))
        let frames = try Self.frames(gif.finished)
        let first = frames[0].bitmap, second = frames[1].bitmap
        #expect(first.width == 4 && first.height == 3 && second.width == 4 && second.height == 3)
        #expect(Self.pixel(first, 1, 1) == Self.redPixel && Self.pixel(first, 2, 1) == Self.redPixel)
        #expect(Self.pixel(first, 0, 0) == Self.clear && Self.pixel(first, 3, 1) == Self.clear)
        #expect(Self.pixel(second, 3, 2) == Self.greenPixel && Self.pixel(second, 2, 2) == Self.clear)
    }

    /// Disposals 5–7 are undefined: browsers leave the frame, so does thumbd;
    /// 4 restores, as 3 does. An index past the table is opaque black.
    @Test func undefinedDisposalsKeepAndFourRestores() throws {
        for (disposal, kept) in [(5, true), (6, true), (7, true), (4, false), (3, false)] {
            var gif = GIFWriter(width: 2, height: 1, palette: Self.palette)
            gif.frame(width: 2, height: 1, pixels: .run(0, count: 2))
            gif.frame(width: 1, height: 1, pixels: .indices([5]), disposal: disposal)
            gif.frame(x: 1, y: 0, width: 1, height: 1, pixels: .indices([1]))
            let frames = try Self.frames(gif.finished)
            #expect(Self.pixel(frames[1].bitmap, 0, 0) == [0, 0, 0, 255], "\(disposal)")
            #expect(Self.pixel(frames[2].bitmap, 0, 0) == (kept ? [0, 0, 0, 255] : Self.redPixel), "\(disposal)")
        }
    }

    /// A delay under 20 ms shows 100 ms (browsers); a longer one is kept.
    @Test func shortDelaysShowFor100Milliseconds() throws {
        var gif = GIFWriter(width: 1, height: 1, palette: Self.palette)
        for delay in [0, 1, 2, 3, 65535] { gif.frame(width: 1, height: 1, pixels: .indices([0]), delay: delay) }
        #expect(try Self.frames(gif.finished).map(\.duration) == [100, 100, 20, 30, 655_350])
    }

    /// Damage after a whole frame ends the animation there, as browsers show
    /// it; damage in the first frame is corrupt, as for the still decode.
    @Test func damageAfterTheFirstFrameEndsTheAnimation() throws {
        var gif = GIFWriter(width: 8, height: 8, palette: Self.palette)
        gif.frame(width: 8, height: 8, pixels: .run(0, count: 64))
        gif.frame(width: 8, height: 8, pixels: .indices((0..<64).map { UInt8($0 % 2) }))
        let whole = gif.bytes
        gif.frame(width: 8, height: 8, pixels: .indices((0..<64).map { UInt8($0 / 8 % 2) }))
        let three = gif.finished
        #expect(try Self.frames(three).count == 3)
        // Cut inside the third frame's LZW data; or junk where a block should start.
        #expect(try Self.frames(Array(three[..<(whole.count + 30)])).count == 2)
        #expect(try Self.frames(whole + [0x99, 0x99]).count == 2)
        // The file ends without a trailer after complete frames.
        #expect(try Self.frames(whole).count == 2)
        let header = try ImageDecoder.probe(three, maxPixels: 1 << 20)
        // Header, screen and table (19 bytes), control (8), descriptor (10), code size (1), 5 bytes of LZW.
        let firstOnly = Array(three[..<43])
        #expect(throws: CodecError.self) {
            try AnimationDecoder.decode(firstOnly, header: header, maxFrames: 10) { _ in }
        }
    }

    /// Frames after `maxFrames` are never read: a third frame over the pixel
    /// limit fails a decode that reaches it, not one that stops before.
    @Test func framesAfterMaxFramesAreNeverRead() throws {
        var gif = GIFWriter(width: 8, height: 8, palette: Self.palette)
        gif.frame(width: 8, height: 8, pixels: .run(0, count: 64))
        gif.frame(width: 8, height: 8, pixels: .run(1, count: 64))
        gif.frame(width: 5000, height: 5000, pixels: .run(1, count: 25_000_000))
        let bytes = gif.finished
        let header = try ImageDecoder.probe(bytes, maxPixels: 1_000_000)
        #expect(header.animation?.frames == 3)
        #expect(try AnimationDecoder.decode(bytes, header: header, maxFrames: 2) { _ in } == 2)
        #expect(throws: CodecError.tooComplex("GIF frame is larger than the pixel limit")) {
            try AnimationDecoder.decode(bytes, header: header, maxFrames: 3) { _ in }
        }
    }
}
