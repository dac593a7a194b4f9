import Foundation

/// ThumbHash (https://github.com/evanw/thumbhash): a 17-to-25-byte placeholder of an image,
/// its average colour, aspect ratio and low frequencies, that a client turns back into a
/// blurry 32-px picture before the real thumbnail arrives.
///
/// The arithmetic is the reference `rgbaToThumbHash`'s (js/thumbhash.js): the same double
/// expressions in the same order and JavaScript's `Math.round` (`jsRound`), so the bytes are
/// the reference's bit for bit whenever they do not hang on a cosine's last bit. The cosine
/// is the platform's `cos`, which differs from V8's `Math.cos` in the last bit on about 3 %
/// of these arguments. That changes nothing for a real image, but where a channel's AC terms
/// are all mathematically zero (a flat colour, a flat channel) the reference's AC bits are
/// its cosine's rounding noise amplified by 1 / scale (the decoder multiplies them by the
/// quantised scale, 0), and a coefficient zero by symmetry is a tie 7.5 that rounds to 7 or
/// 8 by that noise. No cosine but a copy of V8's reproduces those bits (the reference's own
/// Rust port gives others), and thumbd carries no code ported from elsewhere; ThumbHashTests
/// holds such hashes to the same header and an equivalent picture, the rest to every bit.
///
/// Layout (little endian): 24 bits of L DC (6), P DC (6), Q DC (6), L scale (5), has-alpha (1);
/// 16 bits of the short side's L count (3), P scale (6), Q scale (6), is-landscape (1); with
/// alpha, a byte of A DC (4) and A scale (4); then 4-bit AC coefficients of L, P, Q (and A),
/// low nibble first, in the triangular order of `coefficientCount`.
public enum ThumbHash {
    /// The largest side the encoder takes: more pixels only cost time (the reference's limit).
    public static let maxSide = 100

    /// The hash of a `w`×`h` image of RGBA bytes, straight alpha, at most `maxSide` px a
    /// side (scale it down first).
    public static func encode(width w: Int, height h: Int, rgba: [UInt8]) -> [UInt8] {
        precondition(w <= maxSide && h <= maxSide, "\(w)×\(h) does not fit in \(maxSide)×\(maxSide)")
        precondition(rgba.count == w * h * 4, "\(rgba.count) bytes for \(w)×\(h) RGBA")
        let count = w * h

        // The average colour, weighted by alpha.
        var avgR = 0.0, avgG = 0.0, avgB = 0.0, avgA = 0.0
        for j in stride(from: 0, to: count * 4, by: 4) {
            let alpha = Double(rgba[j + 3]) / 255
            avgR += alpha / 255 * Double(rgba[j])
            avgG += alpha / 255 * Double(rgba[j + 1])
            avgB += alpha / 255 * Double(rgba[j + 2])
            avgA += alpha
        }
        if avgA != 0 {
            avgR /= avgA
            avgG /= avgA
            avgB /= avgA
        }

        let hasAlpha = avgA < Double(count)
        let lLimit = hasAlpha ? 5.0 : 7.0  // fewer luminance coefficients leave room for alpha's
        let longSide = Double(max(w, h))
        let lx = max(1, jsRound(lLimit * Double(w) / longSide))
        let ly = max(1, jsRound(lLimit * Double(h) / longSide))

        // RGBA to LPQA, composited over the average colour.
        var l = [Double](repeating: 0, count: count), p = l, q = l, a = l
        for i in 0..<count {
            let j = i * 4
            let alpha = Double(rgba[j + 3]) / 255
            let r = avgR * (1 - alpha) + alpha / 255 * Double(rgba[j])
            let g = avgG * (1 - alpha) + alpha / 255 * Double(rgba[j + 1])
            let b = avgB * (1 - alpha) + alpha / 255 * Double(rgba[j + 2])
            l[i] = (r + g + b) / 3
            p[i] = (r + g) / 2 - b
            q[i] = r - g
            a[i] = alpha
        }

        let lChannel = encodeChannel(l, width: w, height: h, nx: max(3, lx), ny: max(3, ly))
        let pChannel = encodeChannel(p, width: w, height: h, nx: 3, ny: 3)
        let qChannel = encodeChannel(q, width: w, height: h, nx: 3, ny: 3)
        let aChannel = hasAlpha ? encodeChannel(a, width: w, height: h, nx: 5, ny: 5) : nil

        let isLandscape = w > h
        var header24 = jsRound(63 * lChannel.dc)
        header24 |= jsRound(31.5 + 31.5 * pChannel.dc) << 6
        header24 |= jsRound(31.5 + 31.5 * qChannel.dc) << 12
        header24 |= jsRound(31 * lChannel.scale) << 18
        header24 |= (hasAlpha ? 1 : 0) << 23
        var header16 = isLandscape ? ly : lx
        header16 |= jsRound(63 * pChannel.scale) << 3
        header16 |= jsRound(63 * qChannel.scale) << 9
        header16 |= (isLandscape ? 1 : 0) << 15
        var hash = [header24 & 255, (header24 >> 8) & 255, header24 >> 16, header16 & 255, header16 >> 8]
        if let aChannel {
            hash.append(jsRound(15 * aChannel.dc) | (jsRound(15 * aChannel.scale) << 4))
        }

        // The AC coefficients, two to a byte, low nibble first.
        let acStart = hash.count
        var index = 0
        for channel in [lChannel, pChannel, qChannel] + (aChannel.map { [$0] } ?? []) {
            for f in channel.ac {
                if acStart + (index >> 1) == hash.count { hash.append(0) }
                hash[acStart + (index >> 1)] |= jsRound(15 * f) << ((index & 1) << 2)
                index += 1
            }
        }
        // Like the reference's Uint8Array: each value modulo 256 (all fit; this is no clamp).
        return hash.map { UInt8(truncatingIfNeeded: $0) }
    }

    /// One channel's DCT: the DC term, the AC terms mapped to 0…1 by the largest magnitude
    /// (`scale`), in the order `coefficientCount` walks.
    private static func encodeChannel(_ channel: [Double], width w: Int, height h: Int, nx: Int, ny: Int)
        -> (dc: Double, ac: [Double], scale: Double) {
        var dc = 0.0, ac: [Double] = [], scale = 0.0
        var fx = [Double](repeating: 0, count: w)
        forEachCoefficient(nx: nx, ny: ny, includingDC: true) { cx, cy in
            for x in 0..<w {
                fx[x] = Foundation.cos(Double.pi / Double(w) * Double(cx) * (Double(x) + 0.5))
            }
            var f = 0.0
            for y in 0..<h {
                let fy = Foundation.cos(Double.pi / Double(h) * Double(cy) * (Double(y) + 0.5))
                let row = y * w
                for x in 0..<w {
                    f += channel[row + x] * fx[x] * fy
                }
            }
            f /= Double(w * h)
            if cx != 0 || cy != 0 {
                ac.append(f)
                scale = max(scale, abs(f))
            } else {
                dc = f
            }
        }
        if scale != 0 {
            for i in ac.indices {
                ac[i] = 0.5 + 0.5 / scale * ac[i]
            }
        }
        return (dc, ac, scale)
    }

    /// Walks the format's triangle of coefficients, row by row: (cx, cy) with
    /// cx·ny < nx·(ny − cy), the DC term (0, 0) first when asked for.
    static func forEachCoefficient(nx: Int, ny: Int, includingDC: Bool, _ body: (_ cx: Int, _ cy: Int) -> Void) {
        for cy in 0..<ny {
            var cx = cy == 0 && !includingDC ? 1 : 0
            while cx * ny < nx * (ny - cy) {
                body(cx, cy)
                cx += 1
            }
        }
    }

    /// The number of AC coefficients of an nx × ny channel (its triangle less the DC term).
    static func coefficientCount(nx: Int, ny: Int) -> Int {
        var n = 0
        forEachCoefficient(nx: nx, ny: ny, includingDC: false) { _, _ in n += 1 }
        return n
    }

    /// JavaScript's `Math.round`: to nearest, halves toward +∞ (−2.5 → −2, 0.5 → 1), and
    /// 0.49999999999999994 → 0 where `floor(x + 0.5)` gives 1. `x − floor(x)` is exact.
    static func jsRound(_ x: Double) -> Int {
        let down = x.rounded(.down)
        return Int(x - down >= 0.5 ? down + 1 : down)
    }
}
