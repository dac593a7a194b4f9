import Testing
@testable import ThumbImaging
@testable import ThumbRender

/// The composition parameters reach the pixels (API.md § Composition): each
/// test renders through `ThumbnailPipeline` with the real codecs and would
/// fail if the parameter were parsed but not applied.
@Suite struct CompositionRenderTests {
    /// A 200×100 opaque PNG: a 4-px checkerboard of two greys (64 and 192,
    /// so sharpening has room to overshoot) on the left half, flat mid grey
    /// on the right.
    static let source: [UInt8] = {
        var pixels = [UInt8](repeating: 255, count: 200 * 100 * 4)
        for y in 0..<100 {
            for x in 0..<200 {
                let o = (y * 200 + x) * 4
                let v: UInt8 = x < 100 ? ((x / 4 + y / 4) % 2 == 0 ? 64 : 192) : 128
                (pixels[o], pixels[o + 1], pixels[o + 2]) = (v, v, v)
            }
        }
        return (try? ThumbnailPipeline.encode(Bitmap(width: 200, height: 100, pixels: pixels), format: .png,
                                              quality: 90).bytes) ?? []
    }()

    private func render(_ variant: PreparedVariant, _ source: [UInt8] = source) throws -> Bitmap {
        try ThumbnailPipeline.prepare(source: source, variant: variant, limits: PipelineLimits())
    }

    /// Sum of squared differences between horizontal neighbours of the red channel, in the checkerboard half.
    private func contrast(_ b: Bitmap) -> Int {
        var sum = 0
        for y in 0..<b.height {
            for x in 1..<(b.width / 2) {
                let d = Int(b[x, y].r) - Int(b[x - 1, y].r)
                sum += d * d
            }
        }
        return sum
    }

    @Test func blurSoftensAndSharpenHardensTheSameScaledImage() throws {
        let plain = try render(PreparedVariant(width: 200, height: nil))
        let blurred = try render(PreparedVariant(width: 200, height: nil, blurTenths: 20))
        let sharpened = try render(PreparedVariant(width: 200, height: nil, sharpenTenths: 10))
        #expect(contrast(blurred) * 10 < contrast(plain), "blur 2 px flattens a 4-px checkerboard")
        #expect(contrast(sharpened) > contrast(plain), "sharpen steepens its edges")
        // Far from the checkerboard the flat grey stays flat and opaque.
        #expect(blurred[180, 50] == plain[180, 50] && sharpened[180, 50] == plain[180, 50])
        #expect(blurred.isOpaque && sharpened.isOpaque, "an opaque image stays opaque")
        // Both at once: blur first, then sharpen — not the same as either alone.
        let both = try render(PreparedVariant(width: 200, height: nil, blurTenths: 20, sharpenTenths: 10))
        #expect(both != blurred && both != sharpened && contrast(both) > contrast(blurred))
    }

    @Test func blurIsTheGaussianOfTheScaledImage() throws {
        // The filter on the renderer's own linear floats equals GaussianBlur on
        // the unblurred result's floats, to quantisation: 1 level of 255.
        let plain = try render(PreparedVariant(width: 100, height: nil))
        let blurred = try render(PreparedVariant(width: 100, height: nil, blurTenths: 30))
        func linear(_ byte: UInt8) -> Float { Float(SRGB.linear(Double(byte) / 255)) }
        var floats = (0..<(plain.width * plain.height)).map { i in
            SIMD4<Float>(linear(plain.pixels[i * 4]), linear(plain.pixels[i * 4 + 1]), linear(plain.pixels[i * 4 + 2]), 1)
        }
        GaussianBlur.apply(&floats, width: plain.width, height: plain.height, sigma: 3)
        var worst = 0
        for i in 0..<floats.count {
            let expected = Int((SRGB.encoded(Double(floats[i].x)) * 255).rounded())
            worst = max(worst, abs(expected - Int(blurred.pixels[i * 4])))
        }
        #expect(worst <= 3, "largest difference \(worst)")
    }

    @Test func containPadsWithBackgroundOrTransparency() throws {
        let box = PreparedVariant(width: 100, height: 100, fit: .contain, background: RGBAColor(hex: "ff0000"))
        let red = try render(box)
        #expect(red.width == 100 && red.height == 100)
        // 200×100 in 100×100: scaled 100×50 at y = 25.
        #expect(red[50, 10] == (255, 0, 0, 255) && red[50, 90] == (255, 0, 0, 255))
        #expect(red[0, 24] == (255, 0, 0, 255) && red[0, 25] != (255, 0, 0, 255))
        #expect(red[99, 74] == (128, 128, 128, 255), "the image sits at 25…74")
        var south = box
        south.gravity = .south
        let bottom = try render(south)
        #expect(bottom[99, 99] == (128, 128, 128, 255) && bottom[99, 49] == (255, 0, 0, 255))
        let clear = try render(PreparedVariant(width: 100, height: 100, fit: .contain))
        #expect(clear[50, 5] == (0, 0, 0, 0) && !clear.isOpaque)
        // Without enlarge the image keeps its size on the full canvas.
        let small = try render(PreparedVariant(width: 400, height: 400, fit: .contain, background: .white))
        // 200×100 on 400×400: at (100, 150).
        #expect(small.width == 400 && small.height == 400 && small[250, 200] == (128, 128, 128, 255))
        #expect(small[250, 149] == (255, 255, 255, 255) && small[250, 150] == (128, 128, 128, 255))
        #expect(small[300, 200] == (255, 255, 255, 255) && small[299, 200] == (128, 128, 128, 255))
    }

    @Test func focalPointAndCompassGravityMoveTheCoverWindow() throws {
        // 200×100 covered into 50×50: scaled 100×50, window 50 wide.
        let west = try render(PreparedVariant(width: 50, height: 50, fit: .cover, gravity: .west))
        let east = try render(PreparedVariant(width: 50, height: 50, fit: .cover, gravity: .east))
        let fp = try render(PreparedVariant(width: 50, height: 50, fit: .cover, focalPoint: FocalPoint(x: 900, y: 500)))
        // Lanczos reaches 3 result pixels across the seam at scaled x = 50.
        #expect(contrast(west) > 0 && east[5, 0] == (128, 128, 128, 255) && east[49, 49] == (128, 128, 128, 255))
        #expect(fp == east, "fp 0.9 clamps to the east edge")
        let centre = try render(PreparedVariant(width: 50, height: 50, fit: .cover))
        #expect(centre != west && centre != east)
    }

    @Test func jpegFlattensOntoBg() throws {
        // 16×16, clear: JPEG's chroma subsampling needs room to be exact.
        let translucent = Bitmap(width: 16, height: 16, pixels: [UInt8](repeating: 0, count: 16 * 16 * 4))
        let onBlue = try ThumbnailPipeline.encode(translucent, format: .jpeg, quality: 100,
                                                  background: RGBAColor(hex: "0000ff"))
        let decoded = try render(PreparedVariant(width: 16, height: 16), onBlue.bytes)
        #expect(decoded[8, 8].b > 240 && decoded[8, 8].r < 15, "the clear pixels became bg: \(decoded[8, 8])")
        let onWhite = try ThumbnailPipeline.encode(translucent, format: .jpeg, quality: 100)
        #expect(try render(PreparedVariant(width: 16, height: 16), onWhite.bytes)[8, 8] == (255, 255, 255, 255))
    }
}
