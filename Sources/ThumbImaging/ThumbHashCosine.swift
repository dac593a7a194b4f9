// The algorithm and constants below are fdlibm's (s_cos.c, k_cos.c, k_sin.c, e_rem_pio2.c),
// as ported to C++ in V8's src/base/ieee754.cc. fdlibm's notice, preserved as it asks:
//
//   Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
//
//   Developed at SunPro, a Sun Microsystems, Inc. business.
//   Permission to use, copy, modify, and distribute this
//   software is freely granted, provided that this notice
//   is preserved.

import Foundation

/// The cosine of the reference ThumbHash: fdlibm's `cos`, which is what V8 (node, Chrome)
/// computes for `Math.cos`.
///
/// Why not Glibc's `cos`: both are within 1 ulp, but they differ in the last bit on about
/// 3 % of the arguments ThumbHash uses (measured: 2 490 of 80 800), and a last bit can move
/// a quantised coefficient or a decoded pixel across a rounding boundary. With this one the
/// encoder and decoder reproduce the reference JavaScript bit for bit on every platform,
/// whatever its libm.
///
/// Only the medium range (|x| ≤ 2¹⁹·π/2) is implemented; ThumbHash's arguments are below 8π.
enum ThumbHashCosine {
    static func cos(_ x: Double) -> Double {
        let ix = highWord(x) & 0x7fff_ffff
        if ix <= 0x3fe9_21fb { return kernelCos(x, 0) }  // |x| ≤ π/4
        if ix >= 0x7ff0_0000 { return .nan }  // ±∞, NaN
        // Outside fdlibm's medium range: never reached by ThumbHash; any cosine will do.
        if ix > 0x4139_21fb { return Foundation.cos(x) }
        let (n, y0, y1) = reduce(x)
        switch n & 3 {
        case 0: return kernelCos(y0, y1)
        case 1: return -kernelSin(y0, y1)
        case 2: return -kernelCos(y0, y1)
        default: return kernelSin(y0, y1)
        }
    }

    private static func highWord(_ x: Double) -> Int32 {
        Int32(truncatingIfNeeded: x.bitPattern >> 32)
    }

    /// cos(x + y) for |x| ≤ π/4, y the tail of the reduced argument (k_cos.c).
    private static func kernelCos(_ x: Double, _ y: Double) -> Double {
        let c1 = 4.16666666666666019037e-02, c2 = -1.38888888888741095749e-03
        let c3 = 2.48015872894767294178e-05, c4 = -2.75573143513906633035e-07
        let c5 = 2.08757232129817482790e-09, c6 = -1.13596475577881948265e-11
        let ix = highWord(x) & 0x7fff_ffff
        if ix < 0x3e40_0000 && Int(x) == 0 { return 1 }  // |x| < 2⁻²⁷
        let z = x * x
        let r = z * (c1 + z * (c2 + z * (c3 + z * (c4 + z * (c5 + z * c6)))))
        if ix < 0x3fd3_3333 { return 1 - (0.5 * z - (z * r - x * y)) }  // |x| < 0.3
        // qx = x/4 with the low word cleared (exact), or 0.28125 above 0.78125.
        let qx = ix > 0x3fe9_0000 ? 0.28125 : Double(bitPattern: UInt64(UInt32(ix - 0x0020_0000)) << 32)
        let hz = 0.5 * z - qx
        let a = 1 - qx
        return a - (hz - (z * r - x * y))
    }

    /// sin(x + y) for |x| ≤ π/4 (k_sin.c with iy = 1).
    private static func kernelSin(_ x: Double, _ y: Double) -> Double {
        let s1 = -1.66666666666666324348e-01, s2 = 8.33333333332248946124e-03
        let s3 = -1.98412698298579493134e-04, s4 = 2.75573137070700676789e-06
        let s5 = -2.50507602534068634195e-08, s6 = 1.58969099521155010221e-10
        let ix = highWord(x) & 0x7fff_ffff
        if ix < 0x3e40_0000 && Int(x) == 0 { return x }
        let z = x * x
        let v = z * x
        let r = s2 + z * (s3 + z * (s4 + z * (s5 + z * s6)))
        return x - ((z * (0.5 * y - v * r) - y) - v * s1)
    }

    /// High words of n·π/2 for n in 1…32: where the first reduction step may cancel.
    private static let nPiOver2High: [Int32] = [
        0x3FF9_21FB, 0x4009_21FB, 0x4012_D97C, 0x4019_21FB, 0x401F_6A7A, 0x4022_D97C, 0x4025_FDBB, 0x4029_21FB,
        0x402C_463A, 0x402F_6A7A, 0x4031_475C, 0x4032_D97C, 0x4034_6B9C, 0x4035_FDBB, 0x4037_8FDB, 0x4039_21FB,
        0x403A_B41B, 0x403C_463A, 0x403D_D85A, 0x403F_6A7A, 0x4040_7E4C, 0x4041_475C, 0x4042_106C, 0x4042_D97C,
        0x4043_A28C, 0x4044_6B9C, 0x4045_34AC, 0x4045_FDBB, 0x4046_C6CB, 0x4047_8FDB, 0x4048_58EB, 0x4049_21FB,
    ]

    /// x − n·π/2 as a head and tail, and n (e_rem_pio2.c, |x| ≤ 2¹⁹·π/2 only).
    private static func reduce(_ x: Double) -> (n: Int32, y0: Double, y1: Double) {
        let invPiOver2 = 6.36619772367581382433e-01
        let pio2_1 = 1.57079632673412561417e+00, pio2_1t = 6.07710050650619224932e-11
        let pio2_2 = 6.07710050630396597660e-11, pio2_2t = 2.02226624879595063154e-21
        let pio2_3 = 2.02226624871116645580e-21, pio2_3t = 8.47842766036889956997e-32
        let hx = highWord(x)
        let ix = hx & 0x7fff_ffff
        if ix < 0x4002_d97c {  // |x| < 3π/4: n = ±1
            let nearHalfPi = ix == 0x3ff9_21fb
            if hx > 0 {
                var z = x - pio2_1
                let tail = nearHalfPi ? pio2_2t : pio2_1t
                if nearHalfPi { z -= pio2_2 }
                let y0 = z - tail
                return (1, y0, (z - y0) - tail)
            }
            var z = x + pio2_1
            let tail = nearHalfPi ? pio2_2t : pio2_1t
            if nearHalfPi { z += pio2_2 }
            let y0 = z + tail
            return (-1, y0, (z - y0) + tail)
        }
        let t = abs(x)
        let n = Int32(t * invPiOver2 + 0.5)
        let fn = Double(n)
        var r = t - fn * pio2_1
        var w = fn * pio2_1t  // good to 85 bits
        var y0: Double
        if n < 32 && ix != nPiOver2High[Int(n) - 1] {
            y0 = r - w  // no cancellation
        } else {
            let j = ix >> 20
            y0 = r - w
            if j - ((highWord(y0) >> 20) & 0x7ff) > 16 {  // second step, good to 118 bits
                var t = r
                w = fn * pio2_2
                r = t - w
                w = fn * pio2_2t - ((t - r) - w)
                y0 = r - w
                if j - ((highWord(y0) >> 20) & 0x7ff) > 49 {  // third step, 151 bits
                    t = r
                    w = fn * pio2_3
                    r = t - w
                    w = fn * pio2_3t - ((t - r) - w)
                    y0 = r - w
                }
            }
        }
        let y1 = (r - y0) - w
        return hx < 0 ? (-n, -y0, -y1) : (n, y0, y1)
    }
}
