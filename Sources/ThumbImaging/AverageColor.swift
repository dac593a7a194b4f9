/// The average colour of an image for `/info`'s `averageColor` (API.md §
/// /info): alpha-weighted, averaged in linear light, written back as sRGB.
/// A list paints it before a placeholder or thumbnail arrives.
///
/// Integer sums over the shared 16-bit linear table and one table look-up
/// back: the same pixels give the same colour on every machine, as every
/// instance of a fleet must answer the same bytes for one original.
public enum AverageColor {
    /// The mean colour of `image` (straight alpha), each pixel weighted by
    /// its alpha; opaque black for a fully transparent image.
    public static func of(_ image: Bitmap) -> RGBAColor {
        var sums: (r: UInt64, g: UInt64, b: UInt64) = (0, 0, 0)
        var weight: UInt64 = 0
        SRGB.toLinear16.withUnsafeBufferPointer { lut in
            image.pixels.withUnsafeBufferPointer { p in
                var i = 0
                while i < p.count {
                    let a = UInt64(p[i + 3])
                    sums.r += UInt64(lut[Int(p[i])]) * a
                    sums.g += UInt64(lut[Int(p[i + 1])]) * a
                    sums.b += UInt64(lut[Int(p[i + 2])]) * a
                    weight += a
                    i += 4
                }
            }
        }
        guard weight > 0 else { return RGBAColor(r: 0, g: 0, b: 0) }
        func encoded(_ sum: UInt64) -> UInt8 {
            // Mean linear light 0…65535 → the fromLinear table's nearest step.
            let step = (Double(sum) / Double(weight)) / 65535 * Double(SRGB.fromLinearSize - 1)
            return SRGB.fromLinear[min(SRGB.fromLinearSize - 1, Int(step + 0.5))]
        }
        return RGBAColor(r: encoded(sums.r), g: encoded(sums.g), b: encoded(sums.b))
    }

    /// `#rrggbb`, lower case: `/info`'s spelling.
    public static func hex(_ color: RGBAColor) -> String {
        "#" + RGBAColor(r: color.r, g: color.g, b: color.b).hex
    }
}
