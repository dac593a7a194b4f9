/// The per-scale steps of SSIMULACRA2 (tools/ssimulacra2.cc at 0d8651b0):
/// the 2×2 box downsampling of the linear planes, and the two error maps,
/// each reduced straight to its 1-norm and 4-norm so no map is stored.
/// Arithmetic is libjxl's: Float per pixel, Double sums, in raster order.
enum SSIMULACRA2Maps {
    /// SSIM's stabilising constant C2 (C1 is gone with the luminance denominator).
    static let c2: Float = 0.0009

    /// Halves a `width`×`height` plane in place to ⌈w/2⌉×⌈h/2⌉: each output
    /// the mean of its 2×2 block, a block past the right or bottom edge
    /// repeating the last column or row (libjxl's Downsample clamps its
    /// reads). In place is safe in raster order: output i is written at
    /// index i, and every later output reads only indices above i.
    static func downsample(_ plane: UnsafeMutablePointer<Float>, width: Int, height: Int) {
        let outWidth = (width + 1) / 2, outHeight = (height + 1) / 2
        for oy in 0..<outHeight {
            for ox in 0..<outWidth {
                var sum: Float = 0
                for iy in 0..<2 {
                    let y = min(oy * 2 + iy, height - 1)
                    for ix in 0..<2 {
                        sum += plane[y * width + min(ox * 2 + ix, width - 1)]
                    }
                }
                plane[oy * outWidth + ox] = sum * 0.25
            }
        }
    }

    /// The mean and the 4-norm of 1 − SSIM' over one channel's plane, where
    /// SSIM' drops SSIM's luminance denominator (the values are already
    /// perceptual, not linear light) and is clamped at 0 from below as error.
    static func ssim(mu1: UnsafePointer<Float>, mu2: UnsafePointer<Float>, sigma11: UnsafePointer<Float>,
                     sigma22: UnsafePointer<Float>, sigma12: UnsafePointer<Float>,
                     count: Int) -> (mean: Double, norm4: Double) {
        var sum = 0.0, sum4 = 0.0
        for i in 0..<count {
            let m1 = mu1[i], m2 = mu2[i]
            let m11 = m1 * m1, m22 = m2 * m2, m12 = m1 * m2
            let diff = m1 - m2
            // libjxl writes `float num_m = 1.0 - …`: the subtraction is in Double, then stored as Float.
            let numM = Float(1.0 - Double(diff * diff))
            let numS = 2 * (sigma12[i] - m12) + c2
            let denomS = (sigma11[i] - m11) + (sigma22[i] - m22) + c2
            let d = max(1.0 - Double(numM * numS / denomS), 0)
            sum += d
            sum4 += fourth(d)
        }
        let perPixel = 1.0 / Double(count)
        return (perPixel * sum, (perPixel * sum4).squareRoot().squareRoot())
    }

    /// The two edge maps over one channel's plane: d = (1 + |img2 − mu2|) /
    /// (1 + |img1 − mu1|) − 1; d > 0 is an edge the distorted image has and
    /// the original has not (ringing, blocking, banding), d < 0 detail lost
    /// (blur, smearing). Mean and 4-norm of each.
    static func edges(image1: UnsafePointer<Float>, mu1: UnsafePointer<Float>, image2: UnsafePointer<Float>,
                      mu2: UnsafePointer<Float>,
                      count: Int) -> (artifact: Double, artifact4: Double, detailLost: Double, detailLost4: Double) {
        var sums = (0.0, 0.0, 0.0, 0.0)
        for i in 0..<count {
            let d = (1.0 + Double(abs(image2[i] - mu2[i]))) / (1.0 + Double(abs(image1[i] - mu1[i]))) - 1.0
            let artifact = max(d, 0), lost = max(-d, 0)
            sums.0 += artifact
            sums.1 += fourth(artifact)
            sums.2 += lost
            sums.3 += fourth(lost)
        }
        let perPixel = 1.0 / Double(count)
        return (perPixel * sums.0, (perPixel * sums.1).squareRoot().squareRoot(),
                perPixel * sums.2, (perPixel * sums.3).squareRoot().squareRoot())
    }

    /// x⁴ as libjxl's `tothe4th`: two squarings.
    @inline(__always)
    private static func fourth(_ x: Double) -> Double {
        let x2 = x * x
        return x2 * x2
    }
}
