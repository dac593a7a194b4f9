/// Unsharp mask of premultiplied linear RGBA, in place: out = in + 1·(in − G(in))
/// with `G` the `GaussianBlur` of the given sigma (amount 1), edges clamped.
///
/// The result is clamped to a valid premultiplied pixel: alpha to 0…1, then
/// each colour to 0…alpha. Overshoot is what sharpening adds, so it cannot be
/// avoided, only bounded: colour above alpha would be a straight colour above
/// 1 (brighter than white), colour below 0 negative light, alpha outside 0…1
/// meaningless, and anything composited later (`contain` padding, JPEG's
/// flattening) needs a valid pixel. Clamping colour to alpha keeps the straight
/// colour that quantisation will see within 0…1, so where alpha is untouched
/// (an opaque image) this is exactly clamping each channel to 0…1.
public enum UnsharpMask {
    /// Sharpens `pixels` (`width`×`height`); `sigma` in pixels, 0 < sigma ≤ 10 000
    /// (thumbd's requests give 0.3…40). Keeps one blurred copy of the image.
    public static func apply(_ pixels: inout [SIMD4<Float>], width: Int, height: Int, sigma: Float) {
        var blurred = pixels
        GaussianBlur.apply(&blurred, width: width, height: height, sigma: sigma)
        pixels.withUnsafeMutableBufferPointer { out in
            blurred.withUnsafeBufferPointer { blurred in
                for i in 0..<out.count {
                    let p = out[i]
                    let sharpened = p + (p - blurred[i])
                    // Masks rather than min/max: `clamped` is an uninlined generic
                    // call per pixel and scalar min/max branch on random data.
                    var v = sharpened.replacing(with: 0, where: sharpened .< 0)
                    let alpha = Swift.min(v.w, 1)
                    let top = SIMD4(alpha, alpha, alpha, 1)
                    v.replace(with: top, where: v .> top)
                    out[i] = v
                }
            }
        }
    }
}
