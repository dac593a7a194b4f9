import Foundation

/// The colour steps of SSIMULACRA2: 8-bit sRGB (blended on a grey when
/// translucent) → linear sRGB → XYB (libjxl's lib/jxl/enc_xyb.cc and
/// opsin_params.h at 0d8651b0) → the metric's "positive" XYB (MakePositiveXYB
/// in tools/ssimulacra2.cc), every value a Float as in libjxl.
enum XYB {
    /// 8-bit sRGB → linear light, 0…1. Computed in Double and rounded to
    /// Float: a `pow` that differs in its last Double bit between C libraries
    /// still rounds to the same Float (but in ties too rare to matter), so the
    /// table, like the rest of the metric, is the same on every host.
    static let linearFromByte: [Float] = (0..<256).map { Float(SRGB.linear(Double($0) / 255)) }

    /// Linear light of every byte `c` at every alpha `a` < 255 blended onto
    /// `background` (an sRGB-encoded grey, 0…1) in encoded space, as libjxl's
    /// AlphaBlend does before its transform to linear: `a·c + (1 − a)·bg` in
    /// Float, entry `a · 256 + c`. 65 280 `pow`s once per background, where a
    /// translucent 512×512 pair would need 1.5 million.
    static func blendTable(background: Float) -> [Float] {
        var table = [Float](repeating: 0, count: 255 * 256)
        for alpha in 0..<255 {
            let a = Float(alpha) / 255
            for c in 0..<256 {
                table[alpha * 256 + c] = Float(SRGB.linear(Double(a * (Float(c) / 255) + (1 - a) * background)))
            }
        }
        return table
    }

    /// The linear planes of `bitmap` (`r`, `g`, `b`, each width·height
    /// Floats): opaque pixels from `linearFromByte`, translucent ones from
    /// `blended` (`blendTable`, needed only when `bitmap` has any). With
    /// a = 1 the blend is c exactly, so the two tables agree at the seam.
    static func linearPlanes(of bitmap: Bitmap, blended: [Float],
                             r: UnsafeMutablePointer<Float>, g: UnsafeMutablePointer<Float>,
                             b: UnsafeMutablePointer<Float>) {
        linearFromByte.withUnsafeBufferPointer { table in
            blended.withUnsafeBufferPointer { blended in
                bitmap.pixels.withUnsafeBufferPointer { px in
                    for i in 0..<(bitmap.width * bitmap.height) {
                        let o = 4 * i
                        let alpha = Int(px[o + 3])
                        if alpha == 255 {
                            r[i] = table[Int(px[o])]
                            g[i] = table[Int(px[o + 1])]
                            b[i] = table[Int(px[o + 2])]
                        } else {
                            r[i] = blended[alpha * 256 + Int(px[o])]
                            g[i] = blended[alpha * 256 + Int(px[o + 1])]
                            b[i] = blended[alpha * 256 + Int(px[o + 2])]
                        }
                    }
                }
            }
        }
    }

    // The opsin absorbance matrix and bias (opsin_params.h), evaluated in
    // Float as libjxl's `static const float`s are; thumbd's intensity target
    // is libjxl's default 255 nits, so libjxl's premultiplier is exactly 1.
    static let m00: Float = 0.30, m02: Float = 0.078, m01: Float = 1 - m02 - m00
    static let m10: Float = 0.23, m12: Float = 0.078, m11: Float = 1 - m12 - m10
    static let m20: Float = 0.24342268924547819, m21: Float = 0.20476744424496821, m22: Float = 1 - m20 - m21
    static let bias: Float = 0.0037930732552754493
    static let negativeBiasCubeRoot: Float = -cubeRoot(bias)

    /// Linear `r g b` planes → the metric's positive X, Y, B−Y planes
    /// (`count` values each). Separate outputs: the linear planes are kept
    /// for the next scale's downsampling.
    static func positiveXYB(r: UnsafePointer<Float>, g: UnsafePointer<Float>, b: UnsafePointer<Float>, count: Int,
                            x: UnsafeMutablePointer<Float>, y: UnsafeMutablePointer<Float>,
                            z: UnsafeMutablePointer<Float>) {
        let (m00, m01, m02, m10, m11, m12, m20, m21, m22) = (Self.m00, Self.m01, Self.m02, Self.m10, Self.m11,
                                                             Self.m12, Self.m20, Self.m21, Self.m22)
        let bias = Self.bias, add = negativeBiasCubeRoot
        for i in 0..<count {
            let (cr, cg, cb) = (r[i], g[i], b[i])
            // libjxl's MulAdd(m0, r, MulAdd(m1, g, MulAdd(m2, b, bias))), innermost first, unfused.
            // Never negative for in-gamut input; libjxl clamps at zero all the same.
            let mixed0 = max(m00 * cr + (m01 * cg + (m02 * cb + bias)), 0)
            let mixed1 = max(m10 * cr + (m11 * cg + (m12 * cb + bias)), 0)
            let mixed2 = max(m20 * cr + (m21 * cg + (m22 * cb + bias)), 0)
            let l = cubeRoot(mixed0) + add, m = cubeRoot(mixed1) + add, s = cubeRoot(mixed2) + add
            let xv = 0.5 * (l - m), yv = 0.5 * (l + m)
            // MakePositiveXYB: B becomes B − Y, and all three roughly span 0…1.
            z[i] = (s - yv) + 0.55
            x[i] = xv * 14 + 0.42
            y[i] = yv + 0.01
        }
    }

    /// ∛x for x ≥ 0 (0 or a normal number: the opsin bias keeps every input
    /// here ≥ 0.0038), libjxl's CubeRootAndAdd method: a first guess of
    /// x^(−1/3) from the exponent bits, four Newton steps, then x·r². Only
    /// IEEE arithmetic, no C library call, so it rounds alike everywhere; it
    /// is within a few ulp of the true cube root (XYBTests checks).
    @inline(__always)
    static func cubeRoot(_ x: Float) -> Float {
        let bits = Int32(bitPattern: x.bitPattern)
        // The biased exponent times −1/3, re-biased (0x54800000 = bits of 1 + 1/3 of them); 0 stays 0.
        let guess: Int32 = bits == 0 ? 0 : 0x5480_0000 &- (bits >> 23) &* 0x002A_AAAA
        var r = Float(bitPattern: UInt32(bitPattern: guess))
        let third: Float = 1.0 / 3, fourThirds: Float = 4.0 / 3
        let xThird = third * x
        for _ in 0..<3 {
            let r2 = r * r
            r = fourThirds * r - xThird * (r2 * r2)
        }
        let r2 = r * r
        r = third * (r - x * (r2 * r2)) + r
        return (r * r) * x
    }
}
