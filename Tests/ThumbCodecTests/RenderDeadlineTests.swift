import Testing
import ThumbCodec
import ThumbImaging

/// Configuration.md `maxRenderSeconds`: decoders and encoders give up at
/// their next row, scan or callback once the render's deadline has passed.
@Suite struct RenderDeadlineTests {
    static let sources = [
        "testorig.jpg", "testorig-progressive.jpg", "pngsuite/basn2c08.png", "pngsuite/basi2c08.png",
        "formats/animated.gif", "formats/photo-interlaced.gif", "formats/lossless2.webp",
        "formats/photo-alpha.webp", "formats/photo-alpha.avif", "formats/photo-alpha.heic",
    ]

    @Test(arguments: sources)
    func aPassedDeadlineStopsEveryDecoder(_ name: String) throws {
        let data = Fixtures.bytes(name)
        let header = try ImageDecoder.probe(data, maxPixels: 1 << 26)
        var sink = CountingSink()
        #expect(throws: CodecError.deadlineExceeded) {
            try ImageDecoder.decode(data, header: header, minimumDisplayedSize: nil, deadline: RenderDeadline(after: .zero),
                                    into: &sink)
        }
        #expect(sink.rows < header.height)
        // The same decode with time to spare completes.
        var full = CountingSink()
        try ImageDecoder.decode(data, header: header, minimumDisplayedSize: nil, deadline: RenderDeadline(after: .seconds(60)),
                                into: &full)
        #expect(full.rows == header.height)
    }

    /// A deadline that passes while rows are being read stops the decode there.
    @Test func aDeadlineStopsAPNGBetweenRows() throws {
        let side = 3000
        var pixels = [UInt8](repeating: 255, count: side * side * 4)
        for i in stride(from: 0, to: pixels.count, by: 4) { pixels[i] = UInt8(truncatingIfNeeded: i &* 2654435761 >> 7) }
        let png = try PNGEncoder.encode(Bitmap(width: side, height: side, pixels: pixels))
        let header = try ImageDecoder.probe(png, maxPixels: 1 << 26)
        var sink = CountingSink()
        #expect(throws: CodecError.deadlineExceeded) {
            try ImageDecoder.decode(png, header: header, minimumDisplayedSize: nil, deadline: RenderDeadline(after: .milliseconds(2)),
                                    into: &sink)
        }
        #expect(sink.rows < side)
    }

    @Test func aPassedDeadlineStopsEveryEncoder() throws {
        let bitmap = Bitmap(width: 64, height: 64, pixels: [UInt8](repeating: 200, count: 64 * 64 * 4))
        let passed = RenderDeadline(after: .zero)
        #expect(passed.hasPassed && !RenderDeadline.none.hasPassed && !RenderDeadline(after: .seconds(60)).hasPassed)
        #expect(throws: CodecError.deadlineExceeded) { try JPEGEncoder.encode(bitmap, quality: 80, deadline: passed) }
        #expect(throws: CodecError.deadlineExceeded) { try PNGEncoder.encode(bitmap, deadline: passed) }
        #expect(throws: CodecError.deadlineExceeded) { try WebPEncoder.encode(bitmap, quality: 80, deadline: passed) }
        #expect(throws: CodecError.deadlineExceeded) { try AVIFEncoder.encode(bitmap, quality: 80, deadline: passed) }
        let later = RenderDeadline(after: .seconds(60))
        #expect(try !JPEGEncoder.encode(bitmap, quality: 80, deadline: later).isEmpty)
        #expect(try !PNGEncoder.encode(bitmap, deadline: later).isEmpty)
        #expect(try !WebPEncoder.encode(bitmap, quality: 80, deadline: later).isEmpty)
        #expect(try !AVIFEncoder.encode(bitmap, quality: 80, deadline: later).isEmpty)
    }
}
