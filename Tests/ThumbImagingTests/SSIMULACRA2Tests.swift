import Foundation
import Testing
import ThumbCodec
@testable import ThumbImaging

/// SSIMULACRA2 on real photographs (Fixtures/SOURCES.md): against reference
/// scores computed outside thumbd, identity, the JPEG quality ladder, the
/// translucent rule and the size checks.
///
/// The reference scores come from `Fixtures/ssimulacra2/reference-scores.py`
/// (`pip install ssimulacra2==0.3.0`, with numpy 2.4.6, scipy 1.17.1 and
/// Pillow 13.0.0; run in that folder), three per pair:
/// - `package`: the PyPI package ssimulacra2 0.3.0 as published. It is
///   float64, and its blur is scipy's exact Gaussian with the image mirrored
///   left and right, where libjxl's recursive Gaussian is zero-padded on every
///   side; so the error maps near the side edges differ, the more the worse
///   the image. Over these pairs thumbd scores 0.10…2.85 above it, growing as
///   quality falls; the tolerance, 3.5, is that worst case plus a margin. A
///   mistake in a weight, a scale or a map moves scores by far more (the
///   package's own early stop at 1:16 on 256×192 images costs 20–35 points).
/// - `recursive`: the package's colour, map and weighting functions with
///   libjxl's recursive Gaussian and libjxl's order of scales, in float64.
/// - `recursive32`: the same with the recursive Gaussian in float32, as
///   libjxl and thumbd run it.
/// On the photos thumbd is within 0.037 of both recursive scores (the rest
/// of its pipeline is Float too); tolerance 0.1. The smooth translucent
/// pair on light grey shows why there are two: the recursion's resonators
/// sit on the unit circle, so Float rounding does not decay along a line and
/// adds SSIM error on smooth content (91.53 in float32, 94.84 in float64);
/// libjxl's Float blur has the same kind of noise. thumbd is 0.43 from the
/// float32 figure there (its SSIM map is Float as well); tolerance 0.75.
@Suite struct SSIMULACRA2Tests {
    /// (distorted, reference, package, recursive, recursive32), from reference-scores.py.
    static let references: [(String, String, Double, Double, Double)] = [
        ("LadyBird-q90.jpg", "LadyBird.png", 88.5885, 88.7214, 88.7053),
        ("LadyBird-q70.jpg", "LadyBird.png", 79.8572, 80.3529, 80.3557),
        ("LadyBird-q50.jpg", "LadyBird.png", 72.6183, 73.4053, 73.4023),
        ("LadyBird-q30.jpg", "LadyBird.png", 60.4034, 62.5015, 62.4975),
        ("rocket-q90.jpg", "rocket.png", 80.8943, 81.5176, 81.5190),
        ("rocket-q70.jpg", "rocket.png", 66.9818, 68.0021, 68.0034),
        ("rocket-q50.jpg", "rocket.png", 56.6628, 58.2117, 58.2138),
        ("rocket-q30.jpg", "rocket.png", 39.9925, 42.8553, 42.8580),
        ("hubble_deep_field-q90.jpg", "hubble_deep_field.png", 72.2818, 73.0172, 73.0307),
        ("hubble_deep_field-q70.jpg", "hubble_deep_field.png", 55.7026, 56.5484, 56.5488),
        ("hubble_deep_field-q50.jpg", "hubble_deep_field.png", 43.6405, 45.3900, 45.4060),
        ("hubble_deep_field-q30.jpg", "hubble_deep_field.png", 28.6420, 30.5526, 30.5466),
    ]
    static let photos = ["LadyBird.png", "rocket.png", "hubble_deep_field.png"]

    static func bitmap(_ name: String) throws -> Bitmap {
        let url = Bundle.module.url(forResource: "Fixtures", withExtension: nil)!
            .appendingPathComponent("ssimulacra2/\(name)")
        let data = try #require(FileManager.default.contents(atPath: url.path), "missing fixture \(name)")
        return try ImageDecoder.decodeBitmap([UInt8](data), maxPixels: 1 << 20).bitmap
    }

    @Test(arguments: references)
    func matchesTheReferenceScores(pair: (String, String, Double, Double, Double)) throws {
        let (distorted, reference, package, recursive, recursive32) = pair
        let score = try SSIMULACRA2.score(reference: Self.bitmap(reference), distorted: Self.bitmap(distorted))
        #expect(abs(score - recursive) <= 0.1, "\(distorted): \(score), libjxl's recursion in float64 \(recursive)")
        #expect(abs(score - recursive32) <= 0.1, "\(distorted): \(score), libjxl's recursion in float32 \(recursive32)")
        #expect(abs(score - package) <= 3.5, "\(distorted): \(score), ssimulacra2 0.3.0 \(package)")
    }

    /// Odd sides and a last scale under 8 px: the top left 200×150 halves to
    /// 100×75, 50×38, 25×19, 13×10 and, since libjxl tests the size before
    /// halving, 7×5 (the package, testing after, stops at five scales, so only
    /// the recursive scores apply: 76.0946 in float64, 76.1100 in float32).
    @Test func oddSidesKeepLibjxlsScales() throws {
        func topLeft(_ image: Bitmap) -> Bitmap {
            Bitmap(width: 200, height: 150,
                   pixels: (0..<150).flatMap { y in image.pixels[(y * image.width * 4)..<(y * image.width * 4 + 800)] })
        }
        let score = try SSIMULACRA2.score(reference: topLeft(Self.bitmap("LadyBird.png")),
                                          distorted: topLeft(Self.bitmap("LadyBird-q50.jpg")))
        #expect(abs(score - 76.0946) <= 0.1 && abs(score - 76.1100) <= 0.1, "\(score)")
    }

    @Test func identicalImagesScore100() throws {
        for name in Self.photos + ["arc.png"] {
            let image = try Self.bitmap(name)
            #expect(try SSIMULACRA2.score(reference: image, distorted: image) == 100, "\(name)")
        }
        // The smallest size the metric takes, with one scale at 8×8 and one at 4×4.
        let small = Bitmap(width: 8, height: 8, pixels: (0..<256).map { UInt8(($0 * 37) % 256) | ($0 % 4 == 3 ? 255 : 0) })
        #expect(try SSIMULACRA2.score(reference: small, distorted: small) == 100)
    }

    /// Scores fall strictly as thumbd's JPEG encoder's quality falls, on each
    /// photo (the steps are ≥ 2.5 points apart, far above rounding).
    @Test(arguments: photos)
    func scoresFallWithJPEGQuality(photo: String) throws {
        let reference = try Self.bitmap(photo)
        var previous = 100.0
        for quality in [95, 90, 80, 70, 60, 50, 40, 30, 20, 10] {
            let jpeg = try JPEGEncoder.encode(reference, quality: quality)
            let decoded = try ImageDecoder.decodeBitmap(jpeg, maxPixels: 1 << 20).bitmap
            let score = try SSIMULACRA2.score(reference: reference, distorted: decoded)
            #expect(score < previous - 1, "\(photo) q\(quality): \(score) after \(previous)")
            previous = score
        }
        #expect(previous < 30, "q10 should look bad: \(previous)")
    }

    /// SPEC §17: a translucent rendition scores the lower of its scores on
    /// sRGB greys 26 and 230, each blended as libjxl blends (in encoded
    /// Float, not rounded to bytes). reference-scores.py: on 26, 24.3034 with
    /// the package's blur, 27.8250 with libjxl's in float64, 27.8014 in
    /// float32; on 230, 94.5841, 94.8413 and 91.5283 (the suite's comment says
    /// why the last two differ). The flaw shows most on the dark grey.
    @Test func translucentRenditionScoresTheLowerOfTwoGreys() throws {
        let reference = try Self.bitmap("arc.png"), distorted = try Self.bitmap("arc-webp-q50.png")
        let dark = try SSIMULACRA2.score(reference: reference, distorted: distorted, background: 26)
        let light = try SSIMULACRA2.score(reference: reference, distorted: distorted, background: 230)
        #expect(abs(dark - 27.8250) <= 0.1 && abs(dark - 27.8014) <= 0.1 && abs(dark - 24.3034) <= 3.5, "dark \(dark)")
        #expect(abs(light - 91.5283) <= 0.75 && light < 94.8413, "light \(light)")
        #expect(light - dark > 50)
        #expect(try SSIMULACRA2.translucentScore(reference: reference, distorted: distorted) == min(dark, light))
        #expect(try SSIMULACRA2.score(reference: reference, distorted: distorted) == min(dark, light))
        // Opaque images ignore the background, and the rule changes nothing for them.
        let photo = try Self.bitmap("rocket.png"), jpeg = try Self.bitmap("rocket-q50.jpg")
        let plain = try SSIMULACRA2.score(reference: photo, distorted: jpeg)
        #expect(try SSIMULACRA2.translucentScore(reference: photo, distorted: jpeg) == plain)
        #expect(try SSIMULACRA2.score(reference: photo, distorted: jpeg, background: 26) == plain)
    }

    @Test func refusesImagesUnder8PixelsAndMismatchedSides() throws {
        for (width, height) in [(7, 8), (8, 7), (1, 1), (7, 300)] {
            let image = Bitmap(width: width, height: height)
            #expect(throws: SSIMULACRA2Error.tooSmall(width: width, height: height)) {
                try SSIMULACRA2.score(reference: image, distorted: image)
            }
        }
        #expect(throws: SSIMULACRA2Error.sizeMismatch(referenceWidth: 16, referenceHeight: 16, distortedWidth: 16,
                                                      distortedHeight: 17)) {
            try SSIMULACRA2.translucentScore(reference: Bitmap(width: 16, height: 16), distorted: Bitmap(width: 16, height: 17))
        }
    }

    /// The IEEE-only cube root is within libjxl's own bound (8e-7 absolute,
    /// fast_math_test) of the true one over every value the opsin step feeds
    /// it (the bias 0.0038 up to 1.004 for white).
    @Test func cubeRootIsWithinLibjxlsBound() {
        var worst = 0.0
        for i in 0...200_000 {
            let x = Float(0.0037) + Float(i) * 1.1e-5
            worst = max(worst, abs(Double(XYB.cubeRoot(x)) - cbrt(Double(x))))
        }
        #expect(worst < 8e-7, "\(worst)")
        #expect(XYB.cubeRoot(0) == 0)
    }

    /// The recursive Gaussian's impulse response is a σ 1.5 Gaussian: the
    /// same at equal distances either side, summing to 1 in the interior, and
    /// within 0.005 of the sampled Gaussian at every tap; at the border the
    /// zero padding loses the mass past the edge, as libjxl's does.
    @Test func recursiveGaussianImpulseResponse() {
        let gauss = RecursiveGaussian.ssimulacra2
        #expect(gauss.radius == 5)
        let width = 41, centre = 20
        // A vertical line at `position` in a 41×41 plane: the column pass keeps it whole in the
        // middle row (its interior), so that row is the row pass's impulse response.
        func response(at position: Int) -> [Float] {
            var input = [Float](repeating: 0, count: width * width), output = input, temp = input
            var lines = [SIMD4<Float>](repeating: .zero, count: gauss.lineCount(width: width))
            var state = [Float](repeating: 0, count: gauss.stateCount(width: width))
            for y in 0..<width { input[y * width + position] = 1 }
            gauss.blur(input, into: &output, width: width, height: width, temp: &temp, lines: &lines, state: &state)
            return Array(output[(centre * width)..<(centre * width + width)])
        }
        let middle = response(at: centre)
        let norm = (-20...20).map { exp(-Double($0 * $0) / 4.5) }.reduce(0, +)
        for d in 0...15 {
            #expect(abs(middle[centre - d] - middle[centre + d]) < 1e-6, "tap \(d)")
            #expect(abs(Double(middle[centre + d]) - exp(-Double(d * d) / 4.5) / norm) < 0.005, "tap \(d): \(middle[centre + d])")
        }
        #expect(abs(middle.reduce(0, +) - 1) < 1e-3)
        let edge = response(at: 0).reduce(0, +)
        #expect(edge > 0.5 && edge < 0.75, "mass kept at the edge: \(edge)")
    }
}
