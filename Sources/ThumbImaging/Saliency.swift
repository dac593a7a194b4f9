/// The saliency map of `gravity=attention` (API.md § Composition): the image
/// reduced to a coarse grid of cells, each scored for luminance edges, skin
/// tone and colour saturation with libvips' attention weights
/// (`vips_smartcrop_attention`, libvips/conversion/smartcrop.c), so that a
/// region that differs from its surroundings, looks like skin or is vividly
/// coloured scores high.
///
/// Where thumbd differs from libvips, and why:
/// - Cells are square (the long side has `longSide` cells), not a 32×32 grid
///   stretched to the image, so edges and the later blur are the same in both
///   directions.
/// - Cells average *linear* light (libvips shrinks the stored sRGB values).
/// - "Saturation" is the CIE Lab chroma √(a*² + b*²); libvips reads Lab's band
///   1, which is a* alone, so green things score below grey and red ones above.
/// - Transparency: libvips premultiplies, so transparent regions are black
///   and "dark" (no skin, no saturation), but their border is an edge. Here
///   every term is also weighed by the cell's coverage (mean alpha), so a
///   transparent cell scores nothing at all.
///
/// Scores are rounded to integers (1/256 of libvips' units) so the blur and
/// the search for the maximum in `Attention` are exact integer arithmetic;
/// the colour maths uses only + − × ÷ and √ (IEEE-exact everywhere) and the
/// shared sRGB table, never `pow`/`cbrt` from the C library, whose last bit
/// may differ between machines.
struct Saliency {
    /// Cells per row.
    let width: Int
    /// Cells per column.
    let height: Int
    /// `width * height` scores, row-major, in 1/256 of libvips' units.
    let scores: [Int]

    /// libvips' weights, in its units (Y of XYZ in 0…100, Lab as usual).
    enum Weight {
        /// Factor on |Laplacian of Y| (libvips: `vips_linear1(…, 5.0, 0.0)`).
        static let edge = 5.0
        /// The skin direction in XYZ, compared with the cell's XYZ direction
        /// (libvips takes it from smartcrop.js; a score of 100·(1 − distance)).
        static let skin: SIMD3<Double> = [0.78, 0.57, 0.44]
        /// Cells whose Y is at most this (0…100) count no skin and no saturation.
        static let darkY = 5.0
        /// Fixed-point scale of `scores`.
        static let scale = 256.0
    }

    /// Reduces `image` to cells (`longSide` on its long side, fewer when the
    /// image has fewer pixels) and scores each.
    init(_ image: Bitmap, longSide: Int = 32) {
        let (gw, gh) = Self.gridSize(width: image.width, height: image.height, longSide: longSide)
        width = gw
        height = gh
        let cells = Self.cellMeans(image, gridWidth: gw, gridHeight: gh)
        // Y of the premultiplied mean, 0…100: what the edge term differentiates
        // (transparent is black, as in libvips).
        let premultipliedY = cells.map { 100 * Self.luminance($0.premultiplied) }
        var scores = [Int](repeating: 0, count: gw * gh)
        for y in 0..<gh {
            for x in 0..<gw {
                let i = y * gw + x
                let cell = cells[i]
                guard cell.coverage > 0 else { continue }
                let centre = premultipliedY[i]
                let laplacian = 4 * centre
                    - premultipliedY[y * gw + max(x - 1, 0)] - premultipliedY[y * gw + min(x + 1, gw - 1)]
                    - premultipliedY[max(y - 1, 0) * gw + x] - premultipliedY[min(y + 1, gh - 1) * gw + x]
                let edge = Weight.edge * abs(laplacian)
                let colour = Self.colourScore(cell.premultiplied / cell.coverage)
                let score = (edge + colour) * cell.coverage
                scores[i] = Int((score * Weight.scale).rounded(.toNearestOrAwayFromZero))
            }
        }
        self.scores = scores
    }

    /// Square cells: `longSide` (or the image's own long side, if smaller) on
    /// the long side, the short side in proportion, at least 1.
    static func gridSize(width: Int, height: Int, longSide: Int) -> (Int, Int) {
        let long = max(width, height), short = min(width, height)
        let cellsLong = min(longSide, long)
        let cellsShort = min(short, max(1, (cellsLong * short + long / 2) / long))
        return width >= height ? (cellsLong, cellsShort) : (cellsShort, cellsLong)
    }

    /// A cell's mean linear-light colour premultiplied by alpha (0…1 each), and its mean alpha.
    struct Cell {
        var premultiplied: SIMD3<Double>
        var coverage: Double
    }

    /// Box means over the cells; pixel x goes to cell x·gw/width (floor), so
    /// every cell has at least one column and one row. Integer sums, so the
    /// result does not depend on summation order.
    static func cellMeans(_ image: Bitmap, gridWidth gw: Int, gridHeight gh: Int) -> [Cell] {
        let w = image.width, h = image.height
        var sums = [SIMD4<UInt64>](repeating: .zero, count: gw * gh)
        var rowSums = [SIMD4<UInt64>](repeating: .zero, count: gw)
        let cellColumn = (0..<w).map { $0 * gw / w }
        SRGB.toLinear16.withUnsafeBufferPointer { lut in
            image.pixels.withUnsafeBufferPointer { p in
                for y in 0..<h {
                    for x in 0..<w {
                        let o = (y * w + x) * 4
                        let a = UInt64(p[o + 3])
                        // Linear 0…65535 × alpha 0…255: premultiplied, exact.
                        rowSums[cellColumn[x]] &+= SIMD4(UInt64(lut[Int(p[o])]) * a, UInt64(lut[Int(p[o + 1])]) * a,
                                                         UInt64(lut[Int(p[o + 2])]) * a, a)
                    }
                    let rowBase = (y * gh / h) * gw
                    for c in 0..<gw {
                        sums[rowBase + c] &+= rowSums[c]
                        rowSums[c] = .zero
                    }
                }
            }
        }
        return (0..<(gw * gh)).map { i in
            let s = sums[i]
            let n = Double(pixels(inCell: i % gw, of: gw, across: w) * pixels(inCell: i / gw, of: gh, across: h))
            let full = 65535.0 * 255.0 * n
            return Cell(premultiplied: SIMD3(Double(s.x) / full, Double(s.y) / full, Double(s.z) / full),
                        coverage: Double(s.w) / (255.0 * n))
        }
    }

    /// How many of `side` pixels fall into cell `c` of `cells` (those x with x·cells/side = c).
    static func pixels(inCell c: Int, of cells: Int, across side: Int) -> Int {
        // x·cells/side ≥ c ⇔ x ≥ ⌈c·side/cells⌉.
        ((c + 1) * side + cells - 1) / cells - (c * side + cells - 1) / cells
    }

    /// Skin and saturation of a straight (not premultiplied) linear-light colour, libvips' units.
    static func colourScore(_ rgb: SIMD3<Double>) -> Double {
        let xyz = Self.xyz(rgb) * 100
        guard xyz.y > Weight.darkY else { return 0 }
        let length = norm(xyz)
        let skin = 100 - 100 * norm(xyz / length - Weight.skin)
        return skin + chroma(xyz)
    }

    /// Euclidean length, summed in a fixed order (a SIMD reduction need not be).
    static func norm(_ v: SIMD3<Double>) -> Double {
        (v.x * v.x + v.y * v.y + v.z * v.z).squareRoot()
    }

    /// sRGB primaries, D65 (IEC 61966-2-1).
    static func xyz(_ rgb: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3(0.4124 * rgb.x + 0.3576 * rgb.y + 0.1805 * rgb.z,
              luminance(rgb),
              0.0193 * rgb.x + 0.1192 * rgb.y + 0.9505 * rgb.z)
    }

    static func luminance(_ rgb: SIMD3<Double>) -> Double {
        0.2126 * rgb.x + 0.7152 * rgb.y + 0.0722 * rgb.z
    }

    /// CIE 1976 chroma C*ab of XYZ (0…100), D65 white.
    static func chroma(_ xyz: SIMD3<Double>) -> Double {
        let fx = labF(xyz.x / 95.047), fy = labF(xyz.y / 100), fz = labF(xyz.z / 108.883)
        let a = 500 * (fx - fy), b = 200 * (fy - fz)
        return (a * a + b * b).squareRoot()
    }

    /// Lab's companding function: a cube root above (6/29)³, linear below.
    static func labF(_ t: Double) -> Double {
        t > 216.0 / 24389.0 ? cubeRoot(t) : (24389.0 / 27.0 * t + 16) / 116
    }

    /// ∛t for t in (0.008, 2]: Newton's method from 1, a fixed number of
    /// steps (plain arithmetic, so the same bits on every machine; ≤ 1e-15
    /// from the true root over that range).
    static func cubeRoot(_ t: Double) -> Double {
        var y = 1.0
        for _ in 0..<12 { y = (2 * y + t / (y * y)) / 3 }
        return y
    }
}
