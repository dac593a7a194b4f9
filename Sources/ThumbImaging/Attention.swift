import Foundation

/// `gravity=attention` (API.md § Composition): the focus of an image — the
/// maximum of its `Saliency` map after a Gaussian blur — which the `cover`
/// window is then placed on as `fp` places it.
///
/// libvips blurs with a sigma of a tenth of the crop window's diagonal, so
/// its answer depends on the requested box. thumbd computes one focus per
/// original, so it assumes the window of the commonest crop: a square of the
/// image's short side (what a square thumbnail of any image keeps). That is
/// √2/10 of the short side in cells, at least one cell.
///
/// Deterministic by construction: the map is integers, the blur has integer
/// weights and sums exactly (no rounding at all until the final division),
/// ties go to the cell nearest the centre, so the same bitmap gives the same
/// point on every machine.
public enum Attention {
    /// The focus of `image`: its canonical decode (first frame, oriented,
    /// sRGB, at most 256 px on the long side). A featureless or fully
    /// transparent image has no focus to find and gives the centre, 0.5,0.5.
    public static func focus(of image: Bitmap) -> FocalPoint {
        let map = Saliency(image)
        guard let top = map.scores.max(), let bottom = map.scores.min(), top > bottom else {
            return FocalPoint(x: 500, y: 500)
        }
        // The blur sees the median beyond the edges (see `blur`).
        let median = map.scores.sorted()[(map.scores.count - 1) / 2]
        let blurred = blur(map.scores.map { $0 - median }, width: map.width, height: map.height,
                           sigma: max(1, 2.0.squareRoot() * Double(min(map.width, map.height)) / 10))
        guard let peak = peak(of: blurred, width: map.width, height: map.height) else {
            return FocalPoint(x: 500, y: 500)
        }
        return FocalPoint(fractionX: peak.x / Double(map.width), fractionY: peak.y / Double(map.height))
    }

    /// Integer Gaussian weights for offsets −r…r, r = ⌈3σ⌉, the centre 4096.
    /// `exp` may differ in its last bit between C libraries; rounding to 1/4096
    /// hides that.
    static func kernel(sigma: Double) -> [Int] {
        let radius = Int((3 * sigma).rounded(.up))
        return (-radius...radius).map { k in
            Int((4096 * exp(-Double(k * k) / (2 * sigma * sigma))).rounded(.toNearestOrAwayFromZero))
        }
    }

    /// A separable Gaussian blur, with 0 beyond the edges, left unnormalised:
    /// the scale is the same for every cell, so comparisons between cells are
    /// exact. `focus` subtracts the map's median first, so the frame is taken
    /// to be surrounded by ordinary content: a subject near a corner peaks at
    /// its own middle, not in the corner (libvips clamps the edges, which
    /// piles a corner subject into the corner cell; its crop window stops at
    /// the edge anyway, but the focus is also a point `/info` reports). Scores are at
    /// most ~2^20 and the weights sum to at most ~2^16 per pass: under 2^52, far inside Int.
    static func blur(_ map: [Int], width: Int, height: Int, sigma: Double) -> [Int] {
        let weights = kernel(sigma: sigma)
        let radius = weights.count / 2
        var rows = [Int](repeating: 0, count: map.count)
        for y in 0..<height {
            for x in 0..<width {
                var sum = 0
                for k in max(-radius, -x)...min(radius, width - 1 - x) {
                    sum += weights[k + radius] * map[y * width + x + k]
                }
                rows[y * width + x] = sum
            }
        }
        var out = [Int](repeating: 0, count: map.count)
        for y in 0..<height {
            for x in 0..<width {
                var sum = 0
                for k in max(-radius, -y)...min(radius, height - 1 - y) {
                    sum += weights[k + radius] * rows[(y + k) * width + x]
                }
                out[y * width + x] = sum
            }
        }
        return out
    }

    /// The maximum of `map` in cell units (0…width, 0…height; a cell's centre
    /// is at +0.5), refined between cells by a parabola through the maximum
    /// and its two neighbours on each axis (not across the image's edge, where
    /// there is no neighbour). Nil when the map is flat. Of equal maxima, the
    /// one nearest the centre wins, then the first in row order.
    static func peak(of map: [Int], width: Int, height: Int) -> (x: Double, y: Double)? {
        guard let top = map.max(), let bottom = map.min(), top > bottom else { return nil }
        var best = -1, bestDistance = Int.max
        for i in map.indices where map[i] == top {
            // Doubled coordinates keep the centre an integer.
            let dx = 2 * (i % width) + 1 - width, dy = 2 * (i / width) + 1 - height
            let distance = dx * dx + dy * dy
            if distance < bestDistance {
                best = i
                bestDistance = distance
            }
        }
        let cx = best % width, cy = best / width
        let dx = cx == 0 || cx == width - 1 ? 0
            : vertexOffset(map[best - 1], top, map[best + 1])
        let dy = cy == 0 || cy == height - 1 ? 0
            : vertexOffset(map[best - width], top, map[best + width])
        return (Double(cx) + 0.5 + dx, Double(cy) + 0.5 + dy)
    }

    /// Where the parabola through (−1, l), (0, c), (1, r) peaks, for c ≥ l, r:
    /// within −½…½. Zero when the three are level.
    static func vertexOffset(_ l: Int, _ c: Int, _ r: Int) -> Double {
        let curvature = l - 2 * c + r
        guard curvature < 0 else { return 0 }
        return Double(l - r) / Double(2 * curvature)
    }
}
