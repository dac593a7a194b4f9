import Foundation

/// sRGB ⇄ linear-light conversion tables. Scaling averages light, so it must
/// happen in linear space: averaging sRGB values darkens edges and fine detail.
enum SRGB {
    /// sRGB byte → linear light scaled to 0…65535 (integer sums stay exact).
    static let toLinear16: [UInt32] = (0..<256).map { UInt32((linear(Double($0) / 255) * 65535).rounded()) }

    /// Entries in `fromLinear`; fine enough that adjacent entries differ by
    /// less than one output step even in the steep dark end of the curve.
    static let fromLinearSize = 8192

    /// Linear light in 0…1, quantised to `fromLinearSize` steps → sRGB byte.
    static let fromLinear: [UInt8] = (0..<fromLinearSize).map {
        let v = Double($0) / Double(fromLinearSize - 1)
        return UInt8((encoded(v) * 255).rounded())
    }

    static func linear(_ s: Double) -> Double {
        s <= 0.04045 ? s / 12.92 : pow((s + 0.055) / 1.055, 2.4)
    }

    static func encoded(_ l: Double) -> Double {
        l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1 / 2.4) - 0.055
    }
}
