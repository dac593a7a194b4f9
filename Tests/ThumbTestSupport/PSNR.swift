import Foundation
import ThumbImaging

/// Peak signal-to-noise ratio between two bitmaps of one size, for tests that
/// hold a lossy result to a reference.
public enum PSNR {
    /// In dB, over premultiplied RGB and alpha, all four channels (.infinity when
    /// equal): a transparent pixel's colour, which nobody sees, does not count.
    public static func premultiplied(_ a: Bitmap, _ b: Bitmap) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        var squared = 0.0
        for p in 0..<(a.width * a.height) {
            let o = p * 4
            let aa = Double(a.pixels[o + 3]) / 255, ba = Double(b.pixels[o + 3]) / 255
            for c in 0..<3 {
                let d = Double(a.pixels[o + c]) * aa - Double(b.pixels[o + c]) * ba
                squared += d * d
            }
            let d = Double(a.pixels[o + 3]) - Double(b.pixels[o + 3])
            squared += d * d
        }
        return squared == 0 ? .infinity : 10 * log10(255 * 255 / (squared / Double(a.width * a.height * 4)))
    }
}
