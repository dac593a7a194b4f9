import Foundation

/// Reading a ThumbHash back: the reference's `thumbHashToRGBA`, `thumbHashToAverageRGBA` and
/// `thumbHashToApproximateAspectRatio`, pixel for pixel, over bytes that may be hostile. The
/// platform's `cos` instead of V8's could move a pixel by one level only where 255·v falls
/// within a few ulps of an integer; no pixel of the test vectors does (their generator
/// checks it with the reference's cosines nudged by an ulp).
///
/// The reference reads past the end of a short hash as zeros and divides by a zero count;
/// here a hash must be well formed (`Header`): at least 1 luminance coefficient a side and
/// exactly the byte count its header implies. Anything else is nil, never a trap.
extension ThumbHash {
    /// The placeholder picture: at most 32 px a side, the hash's aspect ratio, RGBA with
    /// straight alpha (opaque when the hash has no alpha). Nil for a malformed hash.
    public static func decode(_ hash: [UInt8]) -> (width: Int, height: Int, rgba: [UInt8])? {
        guard let header = Header(hash) else { return nil }

        // The AC coefficients; saturation boosted 1.25× to make up for quantisation.
        var index = 0
        func channel(nx: Int, ny: Int, scale: Double) -> [Double] {
            var ac: [Double] = []
            forEachCoefficient(nx: nx, ny: ny, includingDC: false) { _, _ in
                let nibble = (hash[header.acStart + (index >> 1)] >> ((index & 1) << 2)) & 15
                ac.append((Double(nibble) / 7.5 - 1) * scale)
                index += 1
            }
            return ac
        }
        let lx = header.lx, ly = header.ly, hasAlpha = header.hasAlpha
        let lAC = channel(nx: lx, ny: ly, scale: header.lScale)
        let pAC = channel(nx: 3, ny: 3, scale: header.pScale * 1.25)
        let qAC = channel(nx: 3, ny: 3, scale: header.qScale * 1.25)
        let aAC = hasAlpha ? channel(nx: 5, ny: 5, scale: header.aScale) : []

        let ratio = header.aspectRatio
        let w = jsRound(ratio > 1 ? 32 : 32 * ratio)
        let h = jsRound(ratio > 1 ? 32 / ratio : 32)

        // The cosines depend on x or y alone: one table each (the reference recomputes them
        // per pixel; the values are the same).
        let nx = max(lx, hasAlpha ? 5 : 3), ny = max(ly, hasAlpha ? 5 : 3)
        var fxTable = [Double](repeating: 0, count: w * nx)
        for x in 0..<w {
            for cx in 0..<nx {
                fxTable[x * nx + cx] = Foundation.cos(Double.pi / Double(w) * (Double(x) + 0.5) * Double(cx))
            }
        }
        var fyTable = [Double](repeating: 0, count: h * ny)
        for y in 0..<h {
            for cy in 0..<ny {
                fyTable[y * ny + cy] = Foundation.cos(Double.pi / Double(h) * (Double(y) + 0.5) * Double(cy))
            }
        }

        var rgba = [UInt8](repeating: 0, count: w * h * 4)
        var i = 0
        for y in 0..<h {
            for x in 0..<w {
                var l = header.lDC, p = header.pDC, q = header.qDC, a = header.aDC
                var j = 0
                forEachCoefficient(nx: lx, ny: ly, includingDC: false) { cx, cy in
                    l += lAC[j] * fxTable[x * nx + cx] * (fyTable[y * ny + cy] * 2)
                    j += 1
                }
                j = 0
                forEachCoefficient(nx: 3, ny: 3, includingDC: false) { cx, cy in
                    let f = fxTable[x * nx + cx] * (fyTable[y * ny + cy] * 2)
                    p += pAC[j] * f
                    q += qAC[j] * f
                    j += 1
                }
                if hasAlpha {
                    j = 0
                    forEachCoefficient(nx: 5, ny: 5, includingDC: false) { cx, cy in
                        a += aAC[j] * fxTable[x * nx + cx] * (fyTable[y * ny + cy] * 2)
                        j += 1
                    }
                }
                let b = l - 2.0 / 3.0 * p
                let r = (3 * l - b + q) / 2
                let g = r - q
                rgba[i] = unitToByte(r)
                rgba[i + 1] = unitToByte(g)
                rgba[i + 2] = unitToByte(b)
                rgba[i + 3] = unitToByte(a)
                i += 4
            }
        }
        return (w, h, rgba)
    }

    /// The average colour, each component 0…1, straight alpha. Nil for a malformed hash.
    public static func averageRGBA(_ hash: [UInt8]) -> (r: Double, g: Double, b: Double, a: Double)? {
        guard let header = Header(hash) else { return nil }
        let l = header.lDC, p = header.pDC, q = header.qDC
        let b = l - 2.0 / 3.0 * p
        let r = (3 * l - b + q) / 2
        let g = r - q
        return (max(0, min(1, r)), max(0, min(1, g)), max(0, min(1, b)), header.aDC)
    }

    /// Width over height of the original, to the format's precision (a ratio of two luminance
    /// counts of 1…7). Nil for a malformed hash.
    public static func approximateAspectRatio(_ hash: [UInt8]) -> Double? {
        Header(hash)?.aspectRatio
    }

    /// `Double(v)·255` clamped to 0…255 and truncated, as the reference's store into a
    /// Uint8Array does.
    private static func unitToByte(_ v: Double) -> UInt8 {
        UInt8(max(0, 255 * min(1, v)))
    }

    /// The constants of a hash, read and checked once.
    struct Header {
        let lDC: Double, pDC: Double, qDC: Double, aDC: Double
        let lScale: Double, pScale: Double, qScale: Double, aScale: Double
        let hasAlpha: Bool
        /// Luminance coefficients along x and y as stored (1…7), for the aspect ratio.
        let storedLX: Int, storedLY: Int
        /// At least 3: what the decoder's luminance DCT uses.
        let lx: Int, ly: Int
        let acStart: Int

        var aspectRatio: Double { Double(storedLX) / Double(storedLY) }

        /// Nil unless `hash` is complete: 5 header bytes, a non-zero stored luminance count,
        /// and exactly as many AC bytes as the counts imply.
        init?(_ hash: [UInt8]) {
            guard hash.count >= 5 else { return nil }
            let header24 = Int(hash[0]) | Int(hash[1]) << 8 | Int(hash[2]) << 16
            let header16 = Int(hash[3]) | Int(hash[4]) << 8
            hasAlpha = header24 >> 23 != 0
            let isLandscape = header16 >> 15 != 0
            storedLX = isLandscape ? (hasAlpha ? 5 : 7) : header16 & 7
            storedLY = isLandscape ? header16 & 7 : (hasAlpha ? 5 : 7)
            guard storedLX > 0 && storedLY > 0 else { return nil }
            lx = max(3, storedLX)
            ly = max(3, storedLY)
            acStart = hasAlpha ? 6 : 5
            let acCount = ThumbHash.coefficientCount(nx: lx, ny: ly) + 2 * ThumbHash.coefficientCount(nx: 3, ny: 3)
                + (hasAlpha ? ThumbHash.coefficientCount(nx: 5, ny: 5) : 0)
            guard hash.count == acStart + (acCount + 1) / 2 else { return nil }

            lDC = Double(header24 & 63) / 63
            pDC = Double((header24 >> 6) & 63) / 31.5 - 1
            qDC = Double((header24 >> 12) & 63) / 31.5 - 1
            lScale = Double((header24 >> 18) & 31) / 31
            pScale = Double((header16 >> 3) & 63) / 63
            qScale = Double((header16 >> 9) & 63) / 63
            aDC = hasAlpha ? Double(hash[5] & 15) / 15 : 1
            aScale = hasAlpha ? Double(hash[5] >> 4) / 15 : 0
        }
    }
}
