/// Why two bitmaps cannot be compared.
public enum SSIMULACRA2Error: Error, Equatable, Sendable {
    /// The metric needs at least 8×8 pixels (libjxl's tool refuses smaller
    /// images; its scales stop below 8 px too).
    case tooSmall(width: Int, height: Int)
    /// The reference and the distorted image must have the same sides.
    case sizeMismatch(referenceWidth: Int, referenceHeight: Int, distortedWidth: Int, distortedHeight: Int)
}

/// SSIMULACRA2, the perceptual metric of SPEC §17 (Quality.md): SSIMULACRA
/// 2.1 exactly as libjxl's tools/ssimulacra2.cc at commit 0d8651b0 defines
/// it, in thumbd's own code. 100 is no visible difference, 90 ≈ visually
/// lossless, 70 ≈ high quality, 50 medium, 30 low; it falls without bound.
///
/// Both images go to linear sRGB and XYB; at six scales (1:1 … 1:32, halved
/// in linear light) an SSIM map without the luminance denominator and two
/// edge maps (edges only the distorted image has; edges it lost) are
/// reduced to their 1- and 4-norms per X, Y, B channel, and 108 tuned weights
/// and a polynomial and power map their sum to the score.
///
/// Deterministic: Float planes and Double sums as libjxl, one fixed order of
/// evaluation, no fused multiply-adds (Swift never contracts `a * b + c`),
/// no C-library call but `pow`, in Double, in tables rounded to Float and in
/// the final mapping. Memory: 18 Float planes of the image's size (18 MiB at
/// 512×512), allocated once per score. Cost: ≈ 17 ms of one core for a
/// 512×512 opaque pair (release build; Quality.md).
public enum SSIMULACRA2 {
    /// The sRGB-encoded greys (of 255) a translucent rendition is blended on
    /// (SPEC §17): libjxl's 0.1 and 0.9, rounded to bytes.
    public static let translucentBackgrounds: (dark: UInt8, light: UInt8) = (26, 230)

    /// The score of `distorted` against `reference` (same sides, ≥ 8×8,
    /// 8-bit sRGB). When either has a pixel with alpha below 255 it is
    /// `translucentScore` (SPEC §17), otherwise the plain score.
    public static func score(reference: Bitmap, distorted: Bitmap) throws(SSIMULACRA2Error) -> Double {
        try check(reference, distorted)
        if reference.isOpaque && distorted.isOpaque {
            // The background never shows: any value gives the same planes.
            return compute(reference, distorted, background: 0)
        }
        return min(compute(reference, distorted, background: grey(translucentBackgrounds.dark)),
                   compute(reference, distorted, background: grey(translucentBackgrounds.light)))
    }

    /// SPEC §17's rule for a rendition with alpha: the lower of its scores
    /// with both images blended on the dark grey and on the light grey of
    /// `translucentBackgrounds` (a flaw shows on one or the other; libjxl's
    /// tool does the same for images with alpha). Opaque images score as
    /// `score` scores them, at twice the cost.
    public static func translucentScore(reference: Bitmap, distorted: Bitmap) throws(SSIMULACRA2Error) -> Double {
        try check(reference, distorted)
        return min(compute(reference, distorted, background: grey(translucentBackgrounds.dark)),
                   compute(reference, distorted, background: grey(translucentBackgrounds.light)))
    }

    /// The score with both images blended on one sRGB-encoded grey
    /// `background` (0…255), as libjxl's `ComputeSSIMULACRA2(orig, dist, bg)`.
    public static func score(reference: Bitmap, distorted: Bitmap,
                             background: UInt8) throws(SSIMULACRA2Error) -> Double {
        try check(reference, distorted)
        return compute(reference, distorted, background: grey(background))
    }

    private static func grey(_ value: UInt8) -> Float { Float(value) / 255 }

    private static func check(_ reference: Bitmap, _ distorted: Bitmap) throws(SSIMULACRA2Error) {
        guard reference.width == distorted.width && reference.height == distorted.height else {
            throw .sizeMismatch(referenceWidth: reference.width, referenceHeight: reference.height,
                                distortedWidth: distorted.width, distortedHeight: distorted.height)
        }
        guard reference.width >= 8 && reference.height >= 8 else {
            throw .tooSmall(width: reference.width, height: reference.height)
        }
    }

    /// libjxl's ComputeSSIMULACRA2 then Msssim::Score.
    private static func compute(_ reference: Bitmap, _ distorted: Bitmap, background: Float) -> Double {
        let gauss = RecursiveGaussian.ssimulacra2
        var width = reference.width, height = reference.height
        let plane = width * height
        // Planes: 0–2 reference linear RGB, 3–5 distorted linear RGB, 6–8 and 9–11 their XYB,
        // 12–16 the blurred maps of one channel, 17 the blur's row pass; then the column pass's state.
        let storage = UnsafeMutablePointer<Float>.allocate(capacity: 18 * plane + gauss.stateCount(width: width))
        defer { storage.deallocate() }
        func p(_ i: Int) -> UnsafeMutablePointer<Float> { storage + i * plane }
        let state = p(18)
        let lines = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: gauss.lineCount(width: width))
        lines.initialize(repeating: .zero, count: gauss.lineCount(width: width))
        defer { lines.deallocate() }
        let blended = reference.isOpaque && distorted.isOpaque ? [] : XYB.blendTable(background: background)
        XYB.linearPlanes(of: reference, blended: blended, r: p(0), g: p(1), b: p(2))
        XYB.linearPlanes(of: distorted, blended: blended, r: p(3), g: p(4), b: p(5))

        var scales: [SSIMULACRA2Weights.Scale] = []
        for scale in 0..<6 {
            // libjxl tests the size *before* halving, so the last scale it computes may be
            // smaller than 8 px on a side (a 100-px side's 1:16 is 7 px). Kept as published.
            if width < 8 || height < 8 { break }
            if scale > 0 {
                for i in 0..<6 { SSIMULACRA2Maps.downsample(p(i), width: width, height: height) }
                width = (width + 1) / 2
                height = (height + 1) / 2
            }
            let count = width * height
            XYB.positiveXYB(r: p(0), g: p(1), b: p(2), count: count, x: p(6), y: p(7), z: p(8))
            XYB.positiveXYB(r: p(3), g: p(4), b: p(5), count: count, x: p(9), y: p(10), z: p(11))

            var result = SSIMULACRA2Weights.Scale()
            for c in 0..<3 {
                let image1 = p(6 + c), image2 = p(9 + c)
                let (s11, s22, s12, mu1, mu2, temp) = (p(12), p(13), p(14), p(15), p(16), p(17))
                // σ11, σ22, σ12 blur the products in place; μ1, μ2 blur the planes themselves.
                for i in 0..<count { s11[i] = image1[i] * image1[i] }
                for i in 0..<count { s22[i] = image2[i] * image2[i] }
                for i in 0..<count { s12[i] = image1[i] * image2[i] }
                for target in [s11, s22, s12] {
                    gauss.blur(target, into: target, width: width, height: height, temp: temp, lines: lines, state: state)
                }
                gauss.blur(image1, into: mu1, width: width, height: height, temp: temp, lines: lines, state: state)
                gauss.blur(image2, into: mu2, width: width, height: height, temp: temp, lines: lines, state: state)

                let ssim = SSIMULACRA2Maps.ssim(mu1: mu1, mu2: mu2, sigma11: s11, sigma22: s22, sigma12: s12,
                                                count: count)
                result.ssim[c * 2] = ssim.mean
                result.ssim[c * 2 + 1] = ssim.norm4
                let edges = SSIMULACRA2Maps.edges(image1: image1, mu1: mu1, image2: image2, mu2: mu2, count: count)
                result.edges[c * 4] = edges.artifact
                result.edges[c * 4 + 1] = edges.artifact4
                result.edges[c * 4 + 2] = edges.detailLost
                result.edges[c * 4 + 3] = edges.detailLost4
            }
            scales.append(result)
        }
        return SSIMULACRA2Weights.score(scales)
    }
}
