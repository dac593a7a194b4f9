import Foundation
import Testing
import ThumbCodec
@testable import ThumbImaging
@testable import ThumbRender
import ThumbTestSupport

/// `ThumbnailPipeline.renderAnimation` (SPEC §14) against Pillow's composited
/// frames (ThumbCodecTests/Fixtures/animation, README.md there): each output
/// frame, read back from the animated WebP at the moment the reference frame
/// starts, is Pillow's frame scaled to the same size — by thumbd's own scaler
/// (only compositing and encoding differ) and by Pillow's (a scaler in gamma
/// space too) — with the durations and loop count; composition applies to
/// every frame alike; the limits hold.
@Suite struct AnimationRenderTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../ThumbCodecTests/Fixtures").standardized

    static func bytes(_ path: String) -> [UInt8] {
        [UInt8](FileManager.default.contents(atPath: fixtures.appendingPathComponent(path).path)!)
    }

    /// references.txt: path, Pillow's loop value and durations (see the README).
    static let references: [(path: String, loop: Int?, durations: [Int])] = {
        String(decoding: bytes("animation/references.txt"), as: UTF8.self).split(separator: "\n")
            .filter { $0.first != "#" }.map { line -> (String, Int?, [Int]) in
                let fields: [String] = line.split(separator: " ").map { String($0) }
                var values: [String: String] = [:]
                for field in fields.dropFirst() {
                    let parts = field.split(separator: "=", maxSplits: 1).map { String($0) }
                    values[parts[0]] = parts[1]
                }
                let path = fields[0].replacingOccurrences(of: "_", with: "/", options: [], range: fields[0].range(of: "_"))
                return (path, Int(values["loop"]!), values["durations"]!.split(separator: ",").map { Int(String($0))! })
            }
    }()

    /// Pillow's frames of `path`, full size or at the 48-px `inside` size, from their stacked strip.
    static func referenceFrames(_ path: String, count: Int, scaled: Bool = false) throws -> [Bitmap] {
        let name = path.replacingOccurrences(of: "/", with: "_") + (scaled ? "@48" : "")
        let strip = try ImageDecoder.decodeBitmap(bytes("animation/references/\(name).png"), maxPixels: 1 << 24).bitmap
        let height = strip.height / count
        return (0..<count).map { i in
            Bitmap(width: strip.width, height: height,
                   pixels: Array(strip.pixels[(i * height * strip.stride)..<((i + 1) * height * strip.stride)]))
        }
    }

    /// An animated WebP read back: each frame with its start time, and the loop count.
    static func readBack(_ webp: [UInt8]) throws -> (frames: [(bitmap: Bitmap, start: Int, duration: Int)], loop: Int?) {
        let header = try ImageDecoder.probe(webp, maxPixels: 1 << 24)
        var frames: [(Bitmap, Int, Int)] = []
        var time = 0
        try AnimationDecoder.decode(webp, header: header, maxFrames: 10_000) { frame in
            frames.append((frame.bitmap(), time, frame.durationMilliseconds))
            time += frame.durationMilliseconds
        }
        return (frames.map { (bitmap: $0.0, start: $0.1, duration: $0.2) }, header.animation?.loopCount)
    }

    static func render(_ source: [UInt8], _ variant: PreparedVariant, quality: Int = 90,
                       limits: PipelineLimits = PipelineLimits()) throws -> (RenderPlan, AnimatedRendition) {
        let plan = try ThumbnailPipeline.plan(source: source, variant: variant, limits: limits)
        return (plan, try ThumbnailPipeline.renderAnimation(source: source, plan: plan, quality: quality, limits: limits))
    }

    static let paths = references.map(\.path)

    @Test(arguments: paths)
    func everyFrameIsPillowsFrameScaled(_ path: String) throws {
        let reference = try #require(Self.references.first { $0.path == path })
        let isGIF = path.hasSuffix(".gif")
        let durations = reference.durations.map { isGIF && $0 < 20 ? 100 : $0 }
        let full = try Self.referenceFrames(path, count: durations.count)
        let pillowScaled = try Self.referenceFrames(path, count: durations.count, scaled: true)
        let (plan, result) = try Self.render(Self.bytes(path), PreparedVariant(width: 48, height: 48))
        #expect(result.encoded.format == .webp && result.encoded.width == pillowScaled[0].width
                && result.encoded.height == pillowScaled[0].height)
        let out = try Self.readBack(result.encoded.bytes)
        // X-Image-Frames: what the file holds once unchanged frames are merged.
        #expect(result.frames == out.frames.count && result.frames <= durations.count)
        // gif2webp's loop rule for GIFs; a WebP's own count.
        let loop = isGIF ? (reference.loop.map { $0 == 0 ? 0 : min($0 + 1, 65535) } ?? 1) : reference.loop
        #expect(out.loop == loop)
        #expect(out.frames.reduce(0) { $0 + $1.duration } == durations.reduce(0, +))
        // Lossy WebP scores what it scores on tiny palette images (a 32×24 frame of
        // saturated stripes: 15 dB as a still, 4:2:0 chroma), so each frame is held to
        // what the still encoder makes of the same scaled frame at the same quality: within
        // 3 dB of it (a sub-frame is coded over the previous frame's lossy pixels), or 35 dB.
        var start = 0
        for (i, duration) in durations.enumerated() {
            let shown = try #require(out.frames.last { $0.start <= start }).bitmap
            let ours = ThumbnailRenderer.render(full[i], orientation: .up, geometry: plan.geometry)
            let still = try ImageDecoder.decodeBitmap(try ThumbnailPipeline.encode(ours, format: .webp, quality: 90).bytes,
                                                      maxPixels: 1 << 24).bitmap
            let exact = PSNR.premultiplied(shown, ours), pillow = PSNR.premultiplied(shown, pillowScaled[i])
            let stillExact = min(PSNR.premultiplied(still, ours), 45), stillPillow = min(PSNR.premultiplied(still, pillowScaled[i]), 45)
            #expect(exact >= min(stillExact - 3, 35), "\(path) frame \(i): \(exact) dB against thumbd's scaler, still \(stillExact)")
            #expect(pillow >= min(stillPillow - 3, 35), "\(path) frame \(i): \(pillow) dB against Pillow's, still \(stillPillow)")
            start += duration
        }
        // The first frame is what a still render of the plan gives.
        #expect(result.firstFrame == (try ThumbnailPipeline.prepare(source: Self.bytes(path), plan: plan)))
    }

    /// One `cover` window (here from `fp`), blur and `contain`'s background,
    /// the same for every frame: each frame is the renderer of that
    /// composition applied to Pillow's frame.
    @Test func compositionAppliesToEveryFrameAlike() throws {
        let path = "animation/animated-loop-3.gif"
        let full = try Self.referenceFrames(path, count: 10)
        let variants = [
            PreparedVariant(width: 64, height: 64, fit: .cover, focalPoint: FocalPoint(x: 800, y: 200)),
            PreparedVariant(width: 96, height: 64, fit: .contain, background: RGBAColor(r: 0, g: 0, b: 255, a: 255),
                            blurTenths: 15),
        ]
        for variant in variants {
            let (plan, result) = try Self.render(Self.bytes(path), variant)
            let out = try Self.readBack(result.encoded.bytes)
            for i in 0..<10 {
                let shown = try #require(out.frames.last { $0.start <= i * 3000 }).bitmap
                var renderer = ThumbnailPipeline.renderer(for: plan)
                renderer.begin(width: full[i].width, height: full[i].height, color: .sRGB)
                full[i].pixels.withUnsafeBytes { renderer.consume($0, rowCount: full[i].height) }
                let want = renderer.finish()
                let still = try ImageDecoder.decodeBitmap(try ThumbnailPipeline.encode(want, format: .webp, quality: 90).bytes,
                                                          maxPixels: 1 << 24).bitmap
                let psnr = PSNR.premultiplied(shown, want), stillPSNR = min(PSNR.premultiplied(still, want), 45)
                #expect(psnr >= min(stillPSNR - 3, 35), "\(variant.fit) frame \(i): \(psnr) dB, still \(stillPSNR)")
            }
            #expect(out.frames.allSatisfy { $0.bitmap.width == variant.width && $0.bitmap.height == variant.height })
        }
    }

    @Test func maxAnimationFramesDropsTheRest() throws {
        let limits = PipelineLimits(maxAnimationFrames: 4)
        let (plan, result) = try Self.render(Self.bytes("animated/anim40.gif"), PreparedVariant(width: 32, height: 32),
                                             limits: limits)
        #expect(plan.header.animation?.frames == 40 && plan.animationFrames(limits: limits) == 4)
        #expect(result.frames == 4)
        let out = try Self.readBack(result.encoded.bytes)
        #expect(out.frames.count == 4 && out.frames.reduce(0) { $0 + $1.duration } == 4 * 40)
    }

    /// A 8000×6000 screen with junk for image data: five frames are 240 Mpx,
    /// over maxAnimationPixels, refused from the header; three frames pass
    /// that check and reach the decoder, which finds the junk.
    @Test func maxAnimationPixelsIsDecidedFromTheHeaders() throws {
        func hostile(frames: Int) -> [UInt8] {
            var gif = Array("GIF89a".utf8) + [0x40, 0x1F, 0x70, 0x17, 0x80, 0, 0] + [0, 0, 0, 255, 255, 255]
            for _ in 0..<frames {
                gif += [0x2C, 0, 0, 0, 0, 0x40, 0x1F, 0x70, 0x17, 0, 8, 6, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0]
            }
            return gif + [0x3B]
        }
        let variant = PreparedVariant(width: 64, height: 64)
        let five = hostile(frames: 5)
        let plan = try ThumbnailPipeline.plan(source: five, variant: variant, limits: PipelineLimits())
        #expect(plan.header.width == 8000 && plan.header.animation?.frames == 5)
        #expect(throws: RenderError.imageTooLarge("animation of 5 frames of 8000x6000 pixels exceeds maxAnimationPixels 200000000")) {
            try ThumbnailPipeline.renderAnimation(source: five, plan: plan, quality: 80, limits: PipelineLimits())
        }
        // It is the frames rendered that count: four of them are 192 Mpx.
        try ThumbnailPipeline.checkAnimationPixels(plan: plan, limits: PipelineLimits(maxAnimationFrames: 4))
        #expect(throws: RenderError.self) {
            try ThumbnailPipeline.checkAnimationPixels(plan: plan, limits: PipelineLimits(maxAnimationFrames: 4,
                                                                                          maxAnimationPixels: 191_999_999))
        }
        // Under the limit the decode runs, and fails on the junk.
        let three = hostile(frames: 3)
        let threePlan = try ThumbnailPipeline.plan(source: three, variant: variant, limits: PipelineLimits())
        do {
            _ = try ThumbnailPipeline.renderAnimation(source: three, plan: threePlan, quality: 80, limits: PipelineLimits())
            Issue.record("junk image data rendered")
        } catch {
            guard case .corruptImage = error else { Issue.record("\(error)"); return }
        }
    }

    @Test func aPassedDeadlineStopsTheRender() throws {
        let source = Self.bytes("animation/rotating-squares.gif")
        let plan = try ThumbnailPipeline.plan(source: source, variant: PreparedVariant(width: 40, height: 40),
                                              limits: PipelineLimits())
        #expect(throws: RenderError.renderTimedOut) {
            try ThumbnailPipeline.renderAnimation(source: source, plan: plan, quality: 80, limits: PipelineLimits(),
                                                  deadline: RenderDeadline(after: .zero))
        }
    }

    /// A still source gives a one-frame WebP of its still.
    @Test func aStillGivesItsStill() throws {
        let source = Self.bytes("animated/still.gif")
        let (plan, result) = try Self.render(source, PreparedVariant(width: 8, height: 8))
        #expect(!plan.isAnimated && result.frames == 1)
        let still = try ThumbnailPipeline.encode(try ThumbnailPipeline.prepare(source: source, plan: plan), format: .webp,
                                                 quality: 90)
        #expect(result.encoded.bytes == still.bytes)
    }

    /// The estimate counts the frames rendered, not the source's: each one
    /// more is its encoding's bound three times and, for a GIF, giflib's record.
    @Test func theMemoryEstimateCountsTheFramesRendered() throws {
        let source = Self.bytes("animation/rotating-squares.gif")
        let plan = try ThumbnailPipeline.plan(source: source, variant: PreparedVariant(width: 40, height: 40),
                                              limits: PipelineLimits())
        let one = plan.estimatedAnimationMemory(limits: PipelineLimits(maxAnimationFrames: 1))
        let all = plan.estimatedAnimationMemory(limits: PipelineLimits())
        let perFrame = Int((3 * 40.0 * 40 * 9 / 4).rounded(.up)) + 1024
        #expect(all - one == 29 * perFrame)
        // At least the original, the canvas and the encoder's working set.
        #expect(one > source.count + 80 * 80 * 4 + (1 << 20))
    }
}
