import Testing
import ThumbTestSupport
import ThumbCodec
import ThumbImaging

/// AnimatedWebPEncoder (SPEC §14), its output read back with libwebpdemux
/// (WebPAnimationReader, not thumbd's own reader): frames, durations, loop
/// count, pixels, alpha.
@Suite struct AnimatedWebPEncoderTests {
    /// A 40×30 frame: a gradient with a square of `hue` at `x`, opaque or with a transparent band.
    static func frame(_ hue: UInt8, x: Int, transparentBand: Bool = false) -> Bitmap {
        var pixels = [UInt8](repeating: 0, count: 40 * 30 * 4)
        for py in 0..<30 {
            for px in 0..<40 {
                let o = (py * 40 + px) * 4
                let inSquare = (x..<(x + 10)).contains(px) && (10..<20).contains(py)
                pixels[o] = inSquare ? hue : UInt8(px * 6)
                pixels[o + 1] = inSquare ? 255 - hue : UInt8(py * 8)
                pixels[o + 2] = inSquare ? 40 : 128
                pixels[o + 3] = transparentBand && py < 6 ? 0 : transparentBand && py < 9 ? 128 : 255
            }
        }
        return Bitmap(width: 40, height: 30, pixels: pixels)
    }

    static func encode(_ frames: [(Bitmap, Int)], quality: Int = 90, loopCount: Int = 0) throws -> [UInt8] {
        let encoder = try AnimatedWebPEncoder(width: 40, height: 30, quality: quality, loopCount: loopCount)
        for (bitmap, duration) in frames { try encoder.add(bitmap, durationMilliseconds: duration) }
        #expect(encoder.frames == frames.count)
        return try encoder.finish()
    }

    @Test func framesDurationsAndLoopCountSurvive() throws {
        let input = [(Self.frame(200, x: 2), 100), (Self.frame(90, x: 14), 20), (Self.frame(10, x: 27), 250)]
        let bytes = try Self.encode(input, loopCount: 3)
        let read = try #require(WebPAnimationReader(bytes))
        #expect(read.width == 40 && read.height == 30 && read.loopCount == 3)
        #expect(read.frames.map(\.duration) == [100, 20, 250])
        for ((want, _), got) in zip(input, read.frames) {
            let psnr = PSNR.premultiplied(got.bitmap, want)
            #expect(psnr > 28, "\(psnr) dB")
            #expect(got.bitmap.isOpaque)
        }
        // The first frame is coded whole, as the still encoder codes it at that libwebp quality and method 4.
        let still = try ImageDecoder.decodeBitmap(try WebPEncoder.encode(input[0].0, settings: .init(quality: 90, method: 4)),
                                                  maxPixels: 1 << 20).bitmap
        let stillPSNR = PSNR.premultiplied(still, input[0].0)
        #expect(abs(PSNR.premultiplied(read.frames[0].bitmap, input[0].0) - stillPSNR) < 0.5, "still: \(stillPSNR) dB")
        // The header of the result says the same (AnimationFacts reads the ANIM chunk).
        let header = try ImageDecoder.probe(bytes, maxPixels: 1 << 20)
        #expect(header.animation == AnimationFacts(frames: 3, loopCount: 3, holdsPreviousCanvas: true))
    }

    /// Alpha is kept losslessly, as in the still encoder; colour is lossy.
    @Test func alphaIsKeptExactly() throws {
        let input = [(Self.frame(200, x: 2, transparentBand: true), 100), (Self.frame(90, x: 20, transparentBand: true), 100)]
        let read = try #require(WebPAnimationReader(try Self.encode(input)))
        #expect(read.count == 2)
        for ((want, _), got) in zip(input, read.frames) {
            #expect(BitmapPSNR.alpha(got.bitmap, want) == .infinity)
            #expect(PSNR.premultiplied(got.bitmap, want) > 28)
        }
    }

    /// libwebp merges a frame identical to the one before into its duration:
    /// what shows at every moment, and the total, are kept.
    @Test func anUnchangedFrameLengthensTheOneBefore() throws {
        let a = Self.frame(200, x: 2), b = Self.frame(90, x: 14)
        let read = try #require(WebPAnimationReader(try Self.encode([(a, 100), (a, 50), (b, 70)])))
        #expect(read.frames.map(\.duration) == [150, 70])
        #expect(read.totalDuration == 220)
        #expect(PSNR.premultiplied(try #require(read.frame(at: 120)), a) > 28)
    }

    /// `encodedFrames` is what the file holds (SPEC §14's `X-Image-Frames`):
    /// merged neighbours count once, and frames all alike give one.
    @Test func encodedFramesCountsTheFileAfterMerging() throws {
        let a = Self.frame(200, x: 2), b = Self.frame(90, x: 14)
        let encoder = try AnimatedWebPEncoder(width: 40, height: 30, quality: 90, loopCount: 0)
        #expect(encoder.encodedFrames == 0)
        for (bitmap, duration) in [(a, 100), (a, 50), (b, 70), (b, 10), (a, 30)] {
            try encoder.add(bitmap, durationMilliseconds: duration)
        }
        let bytes = try encoder.finish()
        let read = try #require(WebPAnimationReader(bytes))
        #expect(encoder.frames == 5 && encoder.encodedFrames == 3 && read.count == 3)
        #expect(read.frames.map(\.duration) == [150, 80, 30])

        let same = try AnimatedWebPEncoder(width: 40, height: 30, quality: 90, loopCount: 0)
        for _ in 0..<20 { try same.add(a, durationMilliseconds: 40) }
        let still = try same.finish()
        #expect(same.frames == 20 && same.encodedFrames == 1)
        // libwebp writes one frame, as a still or a one-frame animation (whichever is smaller), of the whole time.
        let single = try #require(WebPAnimationReader(still))
        #expect(single.count == 1)
    }

    /// A 0-ms frame stays 0 ms (SPEC §14), first, in the middle and last.
    @Test func zeroMillisecondFramesStayZero() throws {
        let a = Self.frame(200, x: 2), b = Self.frame(90, x: 14), c = Self.frame(10, x: 27)
        let bytes = try Self.encode([(a, 0), (b, 0), (c, 120), (a, 0)])
        let read = try #require(WebPAnimationReader(bytes))
        #expect(read.frames.map(\.duration) == [0, 0, 120, 0])
        #expect(read.totalDuration == 120)
    }

    /// The loop count is WebP's own: 0 forever, up to 65535.
    @Test func loopCountsAreWrittenAsGiven() throws {
        for loop in [0, 1, 2, 65535] {
            let bytes = try Self.encode([(Self.frame(1, x: 0), 10), (Self.frame(250, x: 29), 10)], loopCount: loop)
            #expect(try #require(WebPAnimationReader(bytes)).loopCount == loop)
        }
    }

    /// Quality is the still encoder's: lower quality, fewer bytes.
    @Test func qualityTradesBytes() throws {
        let input = [(Self.frame(200, x: 2), 100), (Self.frame(90, x: 14), 100)]
        #expect(try Self.encode(input, quality: 30).count < Self.encode(input, quality: 95).count)
    }

    @Test func aPassedDeadlineStopsTheEncoder() throws {
        let encoder = try AnimatedWebPEncoder(width: 40, height: 30, quality: 80, loopCount: 0)
        try encoder.add(Self.frame(1, x: 0), durationMilliseconds: 100)
        #expect(throws: CodecError.deadlineExceeded) {
            try encoder.add(Self.frame(2, x: 5), durationMilliseconds: 100, deadline: RenderDeadline(after: .zero))
        }
        #expect(throws: CodecError.self) {
            try AnimatedWebPEncoder(width: 40, height: 30, quality: 80, loopCount: 0).finish()
        }
    }
}
