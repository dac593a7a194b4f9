import Foundation

/// The recursive (IIR) Gaussian SSIMULACRA2 blurs with: libjxl's
/// `CreateRecursiveGaussian`/`FastGaussian` (lib/jxl/gauss_blur.cc at
/// 0d8651b0), after Charalampidis 2016, "Recursive Implementation of the
/// Gaussian Filter Using Truncated Cosine Functions". Three second-order
/// recurrences (k = 1, 3, 5) summed; the input outside the plane is zero
/// (not mirrored: the metric's borders are darkened on purpose, and a mirror
/// would score different numbers). Cost per pixel is independent of sigma.
///
/// libjxl unrolls its row pass four outputs at a time with pre-multiplied
/// coefficients and FMAs, which is the same recurrence algebraically; here
/// both passes run the plain recurrence (libjxl's column form), in Float as
/// libjxl does, in one fixed order. Swift does not contract `a * b + c` into
/// a fused multiply-add (no `-ffp-contract`), so every build rounds the same.
struct RecursiveGaussian {
    /// N: each output reads inputs n − N − 1 and n + N − 1 (5 for σ 1.5).
    let radius: Int
    /// Per recurrence k = 1, 3, 5: the input weight and the feedback weight.
    let n2: (Float, Float, Float)
    let d1: (Float, Float, Float)

    /// The metric's only blur: σ 1.5.
    static let ssimulacra2 = RecursiveGaussian(sigma: 1.5)

    /// Coefficients in Double, stored as Float (libjxl's equation numbers in
    /// the comments are the paper's).
    init(sigma: Double) {
        // (57): libjxl rounds in Float (`roundf`).
        let radius = Double((Float(3.2795 * sigma + 0.2546)).rounded())
        let piOver2r = Double.pi / (2 * radius)
        let omega = [piOver2r, 3 * piOver2r, 5 * piOver2r]
        // (37)
        let p1 = 1 / tan(0.5 * omega[0]), p3 = -1 / tan(0.5 * omega[1]), p5 = 1 / tan(0.5 * omega[2])
        // (44)
        let r1 = p1 * p1 / sin(omega[0]), r3 = -p3 * p3 / sin(omega[1]), r5 = p5 * p5 / sin(omega[2])
        // (50)
        let rho = omega.map { exp(-0.5 * sigma * sigma * $0 * $0) / radius }
        // (52)
        let d13 = p1 * r3 - r1 * p3, d35 = p3 * r5 - r3 * p5, d51 = p5 * r1 - r5 * p1
        let zeta15 = d35 / d13, zeta35 = d51 / d13
        // (53)–(56): beta = A⁻¹ · gamma.
        let a = RecursiveGaussian.inverse3x3([p1, p3, p5, r1, r3, r5, zeta15, zeta35, 1])
        let gamma = [1, radius * radius - sigma * sigma, zeta15 * rho[0] + zeta35 * rho[1] + rho[2]]
        let beta = (0..<3).map { a[3 * $0] * gamma[0] + a[3 * $0 + 1] * gamma[1] + a[3 * $0 + 2] * gamma[2] }
        // (33)
        let n2 = (0..<3).map { Float(-beta[$0] * cos(omega[$0] * (radius + 1))) }
        let d1 = (0..<3).map { Float(-2 * cos(omega[$0])) }
        self.radius = Int(radius)
        self.n2 = (n2[0], n2[1], n2[2])
        self.d1 = (d1[0], d1[1], d1[2])
    }

    /// A row-major 3×3 inverse by cofactors (the matrix here is far from singular).
    private static func inverse3x3(_ m: [Double]) -> [Double] {
        let c = [m[4] * m[8] - m[5] * m[7], m[2] * m[7] - m[1] * m[8], m[1] * m[5] - m[2] * m[4],
                 m[5] * m[6] - m[3] * m[8], m[0] * m[8] - m[2] * m[6], m[2] * m[3] - m[0] * m[5],
                 m[3] * m[7] - m[4] * m[6], m[1] * m[6] - m[0] * m[7], m[0] * m[4] - m[1] * m[3]]
        let det = m[0] * c[0] + m[1] * c[3] + m[2] * c[6]
        return c.map { $0 / det }
    }

    /// `SIMD4<Float>`s of row scratch `blur` needs for planes up to `width`
    /// wide: four interleaved rows with their zero padding.
    func lineCount(width: Int) -> Int { width + 3 * radius + 1 }

    /// Floats of column scratch `blur` needs: the column pass's six state rows.
    func stateCount(width: Int) -> Int { 6 * width }

    /// Blurs `input` (`width`×`height`, row-major, contiguous) into `output`:
    /// rows into `temp`, then columns into `output` (libjxl's order).
    /// `output` may be `input`; `temp`, `lines` and `state` must be distinct from both.
    func blur(_ input: UnsafePointer<Float>, into output: UnsafeMutablePointer<Float>, width: Int, height: Int,
              temp: UnsafeMutablePointer<Float>, lines: UnsafeMutablePointer<SIMD4<Float>>,
              state: UnsafeMutablePointer<Float>) {
        for y in stride(from: 0, to: height, by: 4) {
            blurRows(input + y * width, into: temp + y * width, width: width, rows: min(4, height - y), lines: lines)
        }
        blurColumns(temp, into: output, width: width, height: height, state: state)
    }

    /// Up to four rows at once, one per lane: each step of a row's recurrence
    /// waits for the previous one, so a row alone would leave the vector unit
    /// idle (it costs about a third as much as four rows one by one). The rows
    /// are interleaved into `lines` with 2N zeros before and N + 1 after, so
    /// every input the recurrence reads (indices −2N … width + N − 2) is there
    /// and the loop needs no bounds checks. Lanes are independent and
    /// IEEE-exact, so each row rounds exactly as it would alone.
    private func blurRows(_ rows: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>, width: Int,
                          rows count: Int, lines: UnsafeMutablePointer<SIMD4<Float>>) {
        let n = radius
        lines.update(repeating: .zero, count: lineCount(width: width))
        for r in 0..<count {
            let row = rows + r * width
            for x in 0..<width { lines[2 * n + x][r] = row[x] }
        }
        let (n2a, n2b, n2c) = n2, (d1a, d1b, d1c) = d1
        var p1a = SIMD4<Float>.zero, p2a = SIMD4<Float>.zero, p1b = SIMD4<Float>.zero
        var p2b = SIMD4<Float>.zero, p1c = SIMD4<Float>.zero, p2c = SIMD4<Float>.zero
        @inline(__always) func step(_ i: Int) -> SIMD4<Float> {
            // Output i reads inputs i − N − 1 and i + N − 1: lines[i + N − 1] and lines[i + 3N − 1].
            let s = lines[i + n - 1] + lines[i + 3 * n - 1]
            // libjxl's MulAdd(n2, sum, NegMulSub(d1, prev, prev2)), without the fusion.
            let ya = n2a * s + (-d1a * p1a - p2a)
            let yb = n2b * s + (-d1b * p1b - p2b)
            let yc = n2c * s + (-d1c * p1c - p2c)
            p2a = p1a; p1a = ya
            p2b = p1b; p1b = yb
            p2c = p1c; p1c = yc
            return ya + (yb + yc)
        }
        // The first N − 1 steps only warm the recurrences up (libjxl starts at i = 1 − N too).
        for i in (1 - n)..<0 { _ = step(i) }
        // Results go back into `lines` (entry i is not read again once output i is made).
        for i in 0..<width { lines[i] = step(i) }
        for r in 0..<count {
            let row = out + r * width
            for x in 0..<width { row[x] = lines[x][r] }
        }
    }

    /// All columns at once, a row at a time: each column's recurrence state
    /// is a row of `state` (two rows per k), so the inner loop runs along
    /// contiguous memory and its columns are independent.
    private func blurColumns(_ input: UnsafePointer<Float>, into output: UnsafeMutablePointer<Float>,
                             width: Int, height: Int, state: UnsafeMutablePointer<Float>) {
        let n = radius
        state.initialize(repeating: 0, count: 6 * width)
        // prev and prev2 of each k; the new value overwrites prev2, then the two swap roles.
        var p1a = state, p2a = state + width
        var p1b = state + 2 * width, p2b = state + 3 * width
        var p1c = state + 4 * width, p2c = state + 5 * width
        let (n2a, n2b, n2c) = n2, (d1a, d1b, d1c) = d1
        for i in (1 - n)..<height {
            let top = i - n - 1, bottom = i + n - 1
            let upper: UnsafePointer<Float>? = top >= 0 ? input + top * width : nil
            let lower: UnsafePointer<Float>? = bottom < height ? input + bottom * width : nil
            let out: UnsafeMutablePointer<Float>? = i >= 0 ? output + i * width : nil
            @inline(__always) func step(_ x: Int, _ s: Float) {
                let ya = n2a * s + (-d1a * p1a[x] - p2a[x])
                let yb = n2b * s + (-d1b * p1b[x] - p2b[x])
                let yc = n2c * s + (-d1c * p1c[x] - p2c[x])
                p2a[x] = ya; p2b[x] = yb; p2c[x] = yc
                out?[x] = ya + (yb + yc)
            }
            // Rows outside the plane are zero: one loop per case, no branch per pixel.
            switch (upper, lower) {
            case let (upper?, lower?): for x in 0..<width { step(x, upper[x] + lower[x]) }
            case let (upper?, nil): for x in 0..<width { step(x, upper[x]) }
            case let (nil, lower?): for x in 0..<width { step(x, lower[x]) }
            case (nil, nil): for x in 0..<width { step(x, 0) }
            }
            swap(&p1a, &p2a); swap(&p1b, &p2b); swap(&p1c, &p2c)
        }
    }
}
