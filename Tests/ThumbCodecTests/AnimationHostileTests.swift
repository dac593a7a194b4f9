import Foundation
import Testing
import ThumbCodec
import ThumbImaging

/// Hostile animations answered within the limits (SPEC §14): thousands of
/// tiny frames stop at `maxFrames`; a huge screen is refused from the header;
/// frames of tiny LZW codes (seconds of decoding in a few kilobytes) stop at
/// the deadline, inside a frame.
@Suite struct AnimationHostileTests {
    static let palette: [(UInt8, UInt8, UInt8)] = [(0, 0, 0), (255, 255, 255)]

    static func cpuSeconds(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        return (ContinuousClock.now - start) / .seconds(1)
    }

    /// 10 000 one-pixel frames: the header counts them all, a decode of 200
    /// reads 200 and stops, quickly.
    @Test func tenThousandTinyFramesStopAtMaxFrames() throws {
        var gif = GIFWriter(width: 16, height: 16, palette: Self.palette, loopCount: 0)
        for i in 0..<10_000 {
            gif.frame(x: i % 16, y: i / 16 % 16, width: 1, height: 1, pixels: .indices([UInt8(i % 2)]), delay: 0)
        }
        let bytes = gif.finished
        let header = try ImageDecoder.probe(bytes, maxPixels: 50_000_000)
        #expect(header.animation?.frames == 10_000)
        var count = 0
        let seconds = try Self.cpuSeconds {
            count = try AnimationDecoder.decode(bytes, header: header, maxFrames: 200) { _ in }
        }
        #expect(count == 200)
        #expect(seconds < 1, "\(seconds) s")
    }

    /// A screen of 65535×65535 is refused by the probe, before any canvas exists.
    @Test func aHugeScreenIsRefusedFromTheHeader() throws {
        var gif = GIFWriter(width: 65535, height: 65535, palette: Self.palette)
        gif.frame(width: 1, height: 1, pixels: .indices([0]))
        gif.frame(width: 1, height: 1, pixels: .indices([1]))
        #expect(throws: CodecError.tooLarge(width: 65535, height: 65535)) {
            try ImageDecoder.probe(gif.finished, maxPixels: 50_000_000)
        }
    }

    /// Frames of 7000×7000 pixels of one colour, 49 Mpx each in 37 KB of LZW,
    /// on a 64×64 screen: giflib decodes every row (outside the screen too),
    /// and the deadline stops it in the middle of a frame.
    @Test func lzwHeavyFramesStopAtTheDeadline() throws {
        var gif = GIFWriter(width: 64, height: 64, palette: Self.palette)
        for i in 0..<4 { gif.frame(width: 7000, height: 7000, pixels: .run(UInt8(i % 2), count: 49_000_000)) }
        let bytes = gif.finished
        #expect(bytes.count < 160_000)
        let header = try ImageDecoder.probe(bytes, maxPixels: 50_000_000)
        var frames = 0
        var caught: CodecError?
        let seconds = Self.cpuSeconds {
            do throws(CodecError) {
                try AnimationDecoder.decode(bytes, header: header, maxFrames: 10, deadline: RenderDeadline(after: .milliseconds(200))) { _ in
                    frames += 1
                }
            } catch {
                caught = error
            }
        }
        #expect(caught == .deadlineExceeded)
        #expect(seconds < 0.5, "\(seconds) s")
        #expect(frames < 4)
    }

    /// A frame larger than the pixel limit (its own width·height, as the
    /// probe judges a first frame) is refused when reached.
    @Test func aFrameOverThePixelLimitIsRefused() throws {
        var gif = GIFWriter(width: 64, height: 64, palette: Self.palette)
        gif.frame(width: 64, height: 64, pixels: .run(0, count: 4096))
        gif.frame(width: 8000, height: 8000, pixels: .run(1, count: 64_000_000))
        let bytes = gif.finished
        let header = try ImageDecoder.probe(bytes, maxPixels: 50_000_000)
        var frames = 0
        #expect(throws: CodecError.tooComplex("GIF frame is larger than the pixel limit")) {
            try AnimationDecoder.decode(bytes, header: header, maxFrames: 10) { _ in frames += 1 }
        }
        #expect(frames == 1)
    }
}
