import Testing
import ThumbCodec
import ThumbImaging

/// AnimationDecoder (SPEC §14): every frame of real animated GIFs and WebPs
/// — libvips' and sharp's disposal fixtures, one with every disposal method —
/// composited exactly as Pillow composites them (Fixtures/animation/README.md),
/// with their durations and loop counts.
@Suite struct AnimationDecoderTests {
    static let references = AnimationReference.all().map(\.path)

    static func frames(_ bytes: [UInt8], maxFrames: Int = 1000) throws -> [(bitmap: Bitmap, duration: Int)] {
        let header = try ImageDecoder.probe(bytes, maxPixels: 1 << 24)
        var frames: [(Bitmap, Int)] = []
        try AnimationDecoder.decode(bytes, header: header, maxFrames: maxFrames) { frame in
            frames.append((frame.bitmap(), frame.durationMilliseconds))
        }
        return frames
    }

    @Test(arguments: references)
    func everyFrameIsPillowsCompositedFrame(_ path: String) throws {
        let reference = AnimationReference.named(path)
        let expected = try reference.referenceFrames()
        let frames = try Self.frames(reference.bytes)
        #expect(frames.count == reference.frames)
        for (i, (frame, want)) in zip(frames, expected).enumerated() {
            #expect(frame.bitmap.width == want.width && frame.bitmap.height == want.height)
            #expect(FrameCompare.differingPixels(frame.bitmap, want) == 0, "\(path) frame \(i)")
        }
        #expect(frames.map(\.duration) == reference.expectedDurations, "\(path)")
    }

    @Test func theReferencesCoverEveryDisposalInterlaceAndBothFormats() {
        #expect(Self.references.count == 15)
        #expect(Self.references.filter { $0.hasSuffix(".webp") }.count == 5)
        for name in ["disposals.gif", "dispose-previous.gif", "dispose-background.gif", "rotating-squares-interlaced.gif"] {
            #expect(Self.references.contains("animation/\(name)"))
        }
    }

    /// The header knows the animation before any frame is decoded: frames,
    /// the loop count in WebP's meaning (gif2webp's: none → 1, 0 → forever,
    /// n → n + 1), and whether a previous canvas is kept.
    @Test func theHeaderCarriesTheAnimationsFacts() throws {
        let expected: [String: (frames: Int, loop: Int, previous: Bool)] = [
            "animation/cogs.gif": (5, 32761, false),
            "animation/dispose-background.gif": (3, 11, false),
            "animation/dispose-previous.gif": (3, 1, true),
            "animation/animated-loop-3.gif": (10, 3, false),
            "animation/animated-loop-3.webp": (10, 3, true),
            "animation/rotating-squares.gif": (30, 0, false),
            "animation/disposals.gif": (6, 1, true),
            "formats/animated.gif": (2, 0, false),
            "animated/anim40-lossy.webp": (40, 0, true),
        ]
        for (path, want) in expected {
            let header = try ImageDecoder.probe(Fixtures.bytes(path), maxPixels: 1 << 24)
            let animation = try #require(header.animation, "\(path)")
            #expect(animation.frames == want.frames && animation.loopCount == want.loop, "\(path)")
            #expect(animation.holdsPreviousCanvas == want.previous, "\(path)")
        }
        // The WebP that sharp made from animated-loop-3.gif says 3 as well.
        #expect(AnimationReference.named("animation/animated-loop-3.webp").loop == 3)
        for still in ["animated/still.gif", "animated/still-lossy.webp", "testorig.jpg", "formats/photo-transparent.gif"] {
            #expect(try ImageDecoder.probe(Fixtures.bytes(still), maxPixels: 1 << 24).animation == nil, "\(still)")
        }
    }

    /// An animation's first frame is what the still decoder gives (SPEC §3.2),
    /// so `animated=0` and the animation agree on it.
    @Test(arguments: references)
    func theFirstFrameIsTheStillDecode(_ path: String) throws {
        let bytes = Fixtures.bytes(path)
        let still = try ImageDecoder.decodeBitmap(bytes, maxPixels: 1 << 24).bitmap
        let first = try #require(try Self.frames(bytes, maxFrames: 1).first)
        #expect(FrameCompare.differingPixels(first.bitmap, still) == 0)
    }

    @Test func maxFramesStopsTheDecodeThere() throws {
        let bytes = Fixtures.bytes("animation/rotating-squares.gif")
        let header = try ImageDecoder.probe(bytes, maxPixels: 1 << 24)
        var indices: [Int] = []
        let count = try AnimationDecoder.decode(bytes, header: header, maxFrames: 7) { indices.append($0.index) }
        #expect(count == 7 && indices == Array(0..<7))
        #expect(try AnimationDecoder.decode(bytes, header: header, maxFrames: 0) { _ in Issue.record("no frame wanted") } == 0)
    }

    /// An error thrown by the caller stops the decode and comes back as it is.
    @Test func theCallersErrorStopsTheDecode() throws {
        let bytes = Fixtures.bytes("animation/animated-loop-3.webp")
        let header = try ImageDecoder.probe(bytes, maxPixels: 1 << 24)
        var seen = 0
        #expect(throws: CodecError.encodeFailed("stop")) {
            try AnimationDecoder.decode(bytes, header: header, maxFrames: 100) { _ throws(CodecError) in
                seen += 1
                if seen == 2 { throw .encodeFailed("stop") }
            }
        }
        #expect(seen == 2)
    }

    /// A WebP's ICC profile converts every frame as it converts the still.
    @Test func aWebPsProfileAppliesToEveryFrame() throws {
        let still = Fixtures.bytes("icc/formats/p3-icc.webp")
        let header = try ImageDecoder.probe(still, maxPixels: 1 << 24)
        var frame: Bitmap?
        try AnimationDecoder.decode(still, header: header, maxFrames: 1) { frame = $0.bitmap() }
        let decoded = try ImageDecoder.decodeBitmap(still, maxPixels: 1 << 24).bitmap
        #expect(try #require(frame) == decoded)
    }
}
