import Foundation
import Testing
@testable import ThumbImaging

/// `GaussianBlur` against a Gaussian computed here, in doubles.
///
/// Error bound: if the blur's 1-D kernel `a` is at L1 distance ε from the
/// reference kernel `g` (both summing to 1), the 2-D kernels a⊗a and g⊗g are
/// at most 2ε apart, and since their difference sums to 0, a blurred value of
/// an image whose values lie in 0…1 (premultiplied colour and alpha do) moves
/// by at most half that: ε. Clamped edges only fold taps onto edge pixels,
/// which cannot raise it. So each comparison's tolerance is ε for that sigma
/// (≤ 0.03, `BlurKernel`'s bound) plus 1e-5 of float rounding.
@Suite struct GaussianBlurTests {
    /// The whole request range and past it, finer where the kernel changes
    /// shape (the sampled/box switch at 2, small box radii).
    static let sigmas: [Float] = Array(stride(from: Float(0.3), to: 10, by: 0.1)) + Array(stride(from: Float(10), to: 40, by: 0.5))
        + Array(stride(from: Float(40), through: 400, by: 15))

    @Test func kernelWithinThreePercentOfAGaussianAcrossTheRange() {
        var worst = (error: 0.0, sigma: Float(0))
        for sigma in Self.sigmas {
            let taps = BlurKernel(sigma: sigma).taps
            #expect(abs(taps.reduce(0, +) - 1) < 1e-5, "σ \(sigma): weights sum to \(taps.reduce(0, +))")
            let error = BlurReference.l1(taps, BlurReference.gaussian(Double(sigma), radius: Int((8 * Double(sigma)).rounded(.up)) + 1))
            #expect(error <= 0.03, "σ \(sigma): L1 \(error)")
            if error > worst.error { worst = (error, sigma) }
        }
        // The design figure (BlurKernel's doc): the worst is ≈ 0.0243, near σ 2.9.
        #expect(worst.error > 0.02 && worst.error < 0.025, "worst L1 \(worst.error) at σ \(worst.sigma)")
    }

    /// The passes really apply `taps`: an impulse in a long row, in a long
    /// column, and in a square image (the outer product) comes out as the kernel.
    @Test(arguments: [Float(0.5), 1.5, 1.99, 2, 7.3, 30])
    func impulseResponseIsTheKernel(sigma: Float) {
        let taps = BlurKernel(sigma: sigma).taps
        let radius = taps.count / 2
        let n = taps.count + 20, centre = radius + 10
        for vertical in [false, true] {
            var line = [SIMD4<Float>](repeating: .zero, count: n)
            line[centre] = SIMD4(1, 0.5, 0.25, 1)
            GaussianBlur.apply(&line, width: vertical ? 1 : n, height: vertical ? n : 1, sigma: sigma)
            for i in 0..<n {
                let expected = (i - centre + radius >= 0 && i - centre + radius < taps.count) ? taps[i - centre + radius] : 0
                #expect(abs(Double(line[i].w) - expected) < 1e-6 && abs(Double(line[i].y) - expected / 2) < 1e-6,
                        "σ \(sigma) \(vertical ? "column" : "row") \(i): \(line[i]) vs \(expected)")
            }
        }
        guard taps.count < 80 else { return }
        var image = [SIMD4<Float>](repeating: .zero, count: n * n)
        image[centre * n + centre] = SIMD4(repeating: 1)
        GaussianBlur.apply(&image, width: n, height: n, sigma: sigma)
        for y in 0..<n {
            for x in 0..<n {
                let ty = abs(y - centre) <= radius ? taps[y - centre + radius] : 0
                let tx = abs(x - centre) <= radius ? taps[x - centre + radius] : 0
                #expect(abs(Double(image[y * n + x].x) - tx * ty) < 1e-6, "σ \(sigma) (\(x),\(y))")
            }
        }
    }

    @Test(arguments: [Float(0.3), 0.8, 1.5, 1.99, 2, 3.1, 6.5, 17, 60])
    func matchesAnExactGaussianOnARandomImage(sigma: Float) {
        // 37×23: rows in blocks of four and a block of three; columns in a
        // block of 32, one of four and a last single column. 70×45: two
        // blocks of 32 columns, one of four, a last two.
        var random = SplitMix64(seed: 20)
        for (width, height) in [(37, 23), (70, 45)] {
            let image = (0..<(width * height)).map { _ in BlurReference.randomPremultiplied(&random) }
            expectClose(image, width: width, height: height, sigma: sigma)
        }
    }

    @Test(arguments: [Float(0.5), 1.7, 2.4, 9, 40])
    func matchesAnExactGaussianAcrossEdges(sigma: Float) {
        // Transparent left, opaque white right, a translucent red band at the top:
        // the clamped edges and the alpha edge both show.
        let (width, height) = (29, 19)
        var image = [SIMD4<Float>](repeating: .zero, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                image[y * width + x] = y < 5 ? SIMD4(0.5, 0, 0, 0.5) : x >= 14 ? SIMD4(1, 1, 1, 1) : .zero
            }
        }
        expectClose(image, width: width, height: height, sigma: sigma)
    }

    private func expectClose(_ image: [SIMD4<Float>], width: Int, height: Int, sigma: Float,
                             sourceLocation: SourceLocation = #_sourceLocation) {
        let radius = Int((4 * Double(sigma)).rounded(.up))
        let tolerance = BlurReference.l1(BlurKernel(sigma: sigma).taps, BlurReference.gaussian(Double(sigma), radius: radius)) + 1e-5
        #expect(tolerance <= 0.03 + 1e-5, sourceLocation: sourceLocation)
        let expected = BlurReference.blur(image, width: width, height: height, sigma: Double(sigma))
        var blurred = image
        GaussianBlur.apply(&blurred, width: width, height: height, sigma: sigma)
        var worst = 0.0
        for i in blurred.indices {
            for c in 0..<4 { worst = max(worst, abs(Double(blurred[i][c]) - expected[i][c])) }
        }
        #expect(worst <= tolerance, "σ \(sigma): max error \(worst), tolerance \(tolerance)", sourceLocation: sourceLocation)
    }

    /// Away from the edges a blur only moves light around: each channel's sum stays.
    @Test(arguments: [Float(1.2), 3, 5])
    func preservesEachChannelsSumAwayFromTheEdges(sigma: Float) {
        let side = 64
        var random = SplitMix64(seed: 7)
        var image = [SIMD4<Float>](repeating: .zero, count: side * side)
        for y in 24..<40 { for x in 24..<40 { image[y * side + x] = BlurReference.randomPremultiplied(&random) } }
        var blurred = image
        GaussianBlur.apply(&blurred, width: side, height: side, sigma: sigma)
        let before = image.map { SIMD4<Double>($0) }.reduce(.zero, +)
        let after = blurred.map { SIMD4<Double>($0) }.reduce(.zero, +)
        for c in 0..<4 { #expect(abs(after[c] - before[c]) <= 1e-3 * before[c], "σ \(sigma) channel \(c): \(before[c]) → \(after[c])") }
        #expect(blurred[24 * side + 20].w > 0, "light reached outside the block")
    }

    /// Alpha 1 everywhere stays exactly 1 (so it quantises to 255), for every
    /// sigma on the grid: the sampled weights and the box scales are tuned so.
    @Test func opaqueStaysExactlyOpaque() {
        var random = SplitMix64(seed: 3)
        let (width, height) = (11, 9)
        let image = (0..<(width * height)).map { _ in
            SIMD4(Float.random(in: 0...1, using: &random), Float.random(in: 0...1, using: &random),
                  Float.random(in: 0...1, using: &random), 1)
        }
        for sigma in Self.sigmas + [0.31, 1.999, 2.001, 123.4, 399.9] {
            var blurred = image
            GaussianBlur.apply(&blurred, width: width, height: height, sigma: sigma)
            #expect(blurred.allSatisfy { $0.w == 1 }, "σ \(sigma): alpha \(blurred.map(\.w).filter { $0 != 1 }.prefix(3))")
        }
    }

    @Test(arguments: [Float(0.3), 1, 2, 25, 400])
    func constantImageIsUnchanged(sigma: Float) {
        let value = SIMD4<Float>(0.2, 0.35, 0.05, 0.5)
        var image = [SIMD4<Float>](repeating: value, count: 23 * 17)
        GaussianBlur.apply(&image, width: 23, height: 17, sigma: sigma)
        #expect(image.allSatisfy { BlurReference.distance($0, value) <= 1e-6 }, "σ \(sigma): \(image.first { $0 != value } ?? value)")
    }

    /// Sigma 400 on 3×2: clamped reads and a radius far past the image. Each
    /// line's ends get almost all the weight, so every pixel is close to the
    /// mean of the four corners.
    @Test func hugeSigmaOnATinyImage() {
        var random = SplitMix64(seed: 11)
        let image = (0..<6).map { _ in BlurReference.randomPremultiplied(&random) }
        var blurred = image
        GaussianBlur.apply(&blurred, width: 3, height: 2, sigma: 400)
        let corners = (image[0] + image[2] + image[3] + image[5]) / 4
        for p in blurred {
            #expect(BlurReference.distance(p, corners) < 0.005, "\(p) vs corners' mean \(corners)")
        }
        let expected = BlurReference.blur(image, width: 3, height: 2, sigma: 400)
        for i in 0..<6 { for c in 0..<4 { #expect(abs(Double(blurred[i][c]) - expected[i][c]) < 0.03) } }
    }

    @Test(arguments: [Float(0.3), 1.5, 40, 400])
    func onePixelIsUnchanged(sigma: Float) {
        let value = SIMD4<Float>(0.1, 0.2, 0.3, 0.4)
        var image = [value]
        GaussianBlur.apply(&image, width: 1, height: 1, sigma: sigma)
        #expect(image == [value])
    }
}

/// The reference the blur tests measure against, in doubles.
enum BlurReference {
    /// The sampled Gaussian exp(−k²/2σ²), k = −radius…radius, normalised.
    static func gaussian(_ sigma: Double, radius: Int) -> [Double] {
        let g = (-radius...radius).map { k in exp(-Double(k * k) / (2 * sigma * sigma)) }
        let total = g.reduce(0, +)
        return g.map { $0 / total }
    }

    /// L1 distance between two odd-length kernels centred on each other.
    static func l1(_ a: [Double], _ b: [Double]) -> Double {
        let ra = a.count / 2, rb = b.count / 2, r = max(ra, rb)
        return (-r...r).reduce(0) { sum, k in
            let x = abs(k) <= ra ? a[k + ra] : 0, y = abs(k) <= rb ? b[k + rb] : 0
            return sum + abs(x - y)
        }
    }

    /// The exact Gaussian blur, radius ceil(4σ), edges clamped. Done as a row
    /// then a column convolution, which is the 2-D convolution with the
    /// outer-product kernel (the Gaussian is separable), in doubles.
    static func blur(_ image: [SIMD4<Float>], width: Int, height: Int, sigma: Double) -> [SIMD4<Double>] {
        let radius = Int((4 * sigma).rounded(.up))
        let g = gaussian(sigma, radius: radius)
        let source = image.map { SIMD4<Double>($0) }
        var rows = [SIMD4<Double>](repeating: .zero, count: source.count)
        for y in 0..<height {
            for x in 0..<width {
                var acc = SIMD4<Double>.zero
                for k in -radius...radius { acc += source[y * width + min(max(x + k, 0), width - 1)] * g[k + radius] }
                rows[y * width + x] = acc
            }
        }
        var out = rows
        for y in 0..<height {
            for x in 0..<width {
                var acc = SIMD4<Double>.zero
                for k in -radius...radius { acc += rows[min(max(y + k, 0), height - 1) * width + x] * g[k + radius] }
                out[y * width + x] = acc
            }
        }
        return out
    }

    /// The largest difference between two pixels' channels.
    static func distance(_ a: SIMD4<Float>, _ b: SIMD4<Float>) -> Float {
        let d = a - b
        return max(d.max(), (-d).max())
    }

    /// Alpha 0…1 and colour 0…alpha: a valid premultiplied pixel.
    static func randomPremultiplied(_ random: inout SplitMix64) -> SIMD4<Float> {
        let a = Float.random(in: 0...1, using: &random)
        return SIMD4(Float.random(in: 0...a, using: &random), Float.random(in: 0...a, using: &random),
                     Float.random(in: 0...a, using: &random), a)
    }
}

/// A seeded generator, so the random images are the same on every run.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
