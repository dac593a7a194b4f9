import Testing
@testable import ThumbImaging

/// `UnsharpMask` against out = in + (in − G(in)) with the exact Gaussian of
/// `BlurReference`, clamped as the mask clamps. Its blur is within ε (the
/// kernel's L1 distance, see `GaussianBlurTests`) of the exact one, so each
/// sharpened value is too, and clamping cannot widen the gap.
@Suite struct UnsharpMaskTests {
    /// A `width`×6 opaque image: `left` in columns below `width / 2`, `right` from there on.
    private func step(_ left: SIMD4<Float>, _ right: SIMD4<Float>, width: Int = 40) -> [SIMD4<Float>] {
        (0..<(width * 6)).map { $0 % width < width / 2 ? left : right }
    }

    /// The reference: in + (in − G(in)), then (if `clamped`) alpha to 0…1 and colour to 0…alpha.
    private func reference(_ image: [SIMD4<Float>], width: Int, height: Int, sigma: Float,
                           clamped: Bool = true) -> [SIMD4<Double>] {
        let blurred = BlurReference.blur(image, width: width, height: height, sigma: Double(sigma))
        return zip(image, blurred).map { pixel, blur in
            let out = 2 * SIMD4<Double>(pixel) - blur
            guard clamped else { return out }
            let alpha = min(max(out.w, 0), 1)
            return SIMD4(min(max(out.x, 0), alpha), min(max(out.y, 0), alpha), min(max(out.z, 0), alpha), alpha)
        }
    }

    private func tolerance(_ sigma: Float) -> Double {
        let radius = Int((4 * Double(sigma)).rounded(.up))
        return BlurReference.l1(BlurKernel(sigma: sigma).taps, BlurReference.gaussian(Double(sigma), radius: radius)) + 1e-5
    }

    /// Grey 0.2 | 0.7: the dark side dips below 0.2 and the light side rises
    /// above 0.7 next to the edge, by what the exact formula gives; far from
    /// the edge nothing changes; alpha stays exactly 1.
    @Test(arguments: [Float(0.6), 1.5, 4, 12])
    func stepEdgeOvershootsLikeTheExactFormula(sigma: Float) {
        let width = 100, height = 6, edge = 50
        let image = step(SIMD4(0.2, 0.2, 0.2, 1), SIMD4(0.7, 0.7, 0.7, 1), width: width)
        var sharpened = image
        UnsharpMask.apply(&sharpened, width: width, height: height, sigma: sigma)
        let expected = reference(image, width: width, height: height, sigma: sigma)
        let tolerance = tolerance(sigma)
        for i in sharpened.indices {
            for c in 0..<4 {
                let error = abs(Double(sharpened[i][c]) - expected[i][c])
                #expect(error <= tolerance, "σ \(sigma) at \(i % width)")
            }
        }
        let dark = sharpened[2 * width + edge - 1].x, light = sharpened[2 * width + edge].x
        let expectedDip = 0.2 - expected[2 * width + edge - 1].x, expectedRise = expected[2 * width + edge].x - 0.7
        #expect(dark < 0.2 && light > 0.7, "σ \(sigma): \(dark) | \(light)")
        // Right next to a 0.5 step the exact overshoot is 0.5·(1 − 2·Φ-ish mass) ≥ 0.06 for these sigmas.
        #expect(expectedDip > 0.06 && expectedRise > 0.06)
        #expect(abs(Double(0.2 - dark) - expectedDip) <= tolerance && abs(Double(light - 0.7) - expectedRise) <= tolerance)
        #expect(sharpened.allSatisfy { $0.w == 1 }, "σ \(sigma): alpha must stay exactly 1")
        // Far from the edge (beyond the kernel's reach) flat areas are untouched.
        let reach = BlurKernel(sigma: sigma).taps.count / 2
        for y in 0..<height {
            for x in 0..<width where abs(x - edge) > reach + 1 {
                #expect(BlurReference.distance(sharpened[y * width + x], image[y * width + x]) <= 1e-6, "σ \(sigma) flat at \(x)")
            }
        }
    }

    /// Black | white, opaque: the formula goes below 0 and above 1; the mask
    /// clamps to exactly 0 and 1 and alpha stays 1.
    @Test func clampsColourToZeroAndAlpha() {
        let width = 40
        let image = step(SIMD4(0, 0, 0, 1), SIMD4(1, 1, 1, 1))
        var sharpened = image
        UnsharpMask.apply(&sharpened, width: width, height: 6, sigma: 2)
        let expected = reference(image, width: width, height: 6, sigma: 2, clamped: false)
        #expect(expected[2 * width + 19].x < -0.05 && expected[2 * width + 20].x > 1.05, "the formula overshoots")
        #expect(sharpened[2 * width + 19] == SIMD4(0, 0, 0, 1) && sharpened[2 * width + 20] == SIMD4(1, 1, 1, 1))
        #expect(sharpened.allSatisfy { $0.w == 1 && $0.x >= 0 && $0.x <= 1 })
    }

    /// An alpha edge (transparent | opaque white) overshoots alpha itself:
    /// alpha is clamped to 0…1 and colour to 0…alpha, so the transparent side
    /// stays fully transparent and black, the opaque side opaque white.
    @Test func clampsAlphaAndKeepsColourWithinIt() {
        let width = 40
        let image = step(.zero, SIMD4(1, 1, 1, 1))
        var sharpened = image
        UnsharpMask.apply(&sharpened, width: width, height: 6, sigma: 1.5)
        let expected = reference(image, width: width, height: 6, sigma: 1.5, clamped: false)
        #expect(expected[2 * width + 19].w < -0.05 && expected[2 * width + 20].w > 1.05, "the formula overshoots alpha")
        #expect(sharpened[2 * width + 19] == .zero && sharpened[2 * width + 20] == SIMD4(1, 1, 1, 1))
        #expect(sharpened.allSatisfy { p in p.w >= 0 && p.w <= 1 && (0..<3).allSatisfy { p[$0] >= 0 && p[$0] <= p.w } })
    }

    /// Black | white at alpha 0.8 everywhere: alpha is flat, so it stays 0.8,
    /// while colour overshoots past alpha (a straight colour above 1) and is
    /// clamped to exactly alpha, and below 0 to exactly 0.
    @Test func clampsColourToAlphaWhereAlphaIsFlat() {
        let width = 40
        let image = step(SIMD4(0, 0, 0, 0.8), SIMD4(0.8, 0.8, 0.8, 0.8))
        var sharpened = image
        UnsharpMask.apply(&sharpened, width: width, height: 6, sigma: 3)
        let expected = reference(image, width: width, height: 6, sigma: 3, clamped: false)
        #expect(expected[2 * width + 20].x > 0.85, "the formula overshoots alpha")
        // Alpha comes back 0.8 up to float rounding (2·0.8 − a blurred 0.8).
        let light = sharpened[2 * width + 20], dark = sharpened[2 * width + 19]
        #expect(light.x == light.w && light.y == light.w && dark.x == 0 && dark.y == 0, "\(dark) | \(light)")
        #expect(sharpened.allSatisfy { abs($0.w - 0.8) <= 1e-6 && $0.x <= $0.w && $0.x >= 0 })
    }

    @Test func opaqueStaysExactlyOpaqueAcrossTheSharpenRange() {
        var random = SplitMix64(seed: 5)
        let (width, height) = (13, 7)
        let image = (0..<(width * height)).map { _ in
            SIMD4(Float.random(in: 0...1, using: &random), Float.random(in: 0...1, using: &random),
                  Float.random(in: 0...1, using: &random), 1)
        }
        for sigma in stride(from: Float(0.3), through: 40, by: 0.1) {
            var sharpened = image
            UnsharpMask.apply(&sharpened, width: width, height: height, sigma: sigma)
            #expect(sharpened.allSatisfy { $0.w == 1 }, "σ \(sigma)")
        }
    }

    @Test func constantAndSinglePixelImagesAreUnchanged() {
        let value = SIMD4<Float>(0.1, 0.3, 0.2, 0.6)
        var flat = [SIMD4<Float>](repeating: value, count: 17 * 9)
        UnsharpMask.apply(&flat, width: 17, height: 9, sigma: 2.5)
        #expect(flat.allSatisfy { BlurReference.distance($0, value) <= 1e-6 })
        var one = [value]
        UnsharpMask.apply(&one, width: 1, height: 1, sigma: 40)
        #expect(one == [value])
    }
}
