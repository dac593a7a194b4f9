/// Gaussian blur of premultiplied linear RGBA (`SIMD4<Float>` per pixel,
/// row-major), in place, edges clamped (the image extended by copies of its
/// edge pixels, as the exact Gaussian the tests compare with sees it).
///
/// Separable: rows, then columns, four lines at a time as one `SIMD16` per
/// position, so a pass blurs them together and its running sum stays in
/// registers. Rows go four at a time straight from the image into the first
/// pass and from the last pass back. Columns go `columnLanes` at a time,
/// copied out row run by row run (a pixel per row would cost a cache miss per
/// pixel) into a buffer where each group of four is contiguous, and back.
/// Memory beyond the image: two buffers of `columnLanes` lines, each a line
/// plus `BlurKernel.margin` (≈ 3.3σ) pixels: 1 MiB for 1024 rows at σ 20.
///
/// The kernel is `BlurKernel`'s: an exact sampled Gaussian for small sigmas,
/// four extended boxes (running sums, cost per pixel independent of sigma)
/// above. An image whose alpha is all 1 keeps alpha exactly 1.
public enum GaussianBlur {
    /// Columns per block, a multiple of 4: on 1024², 16 and 64 were slower.
    static let columnLanes = 32

    /// Blurs `pixels` (`width`×`height`) with a Gaussian of standard deviation
    /// `sigma` pixels (0 < sigma ≤ 10 000; thumbd's requests give 0.3…400).
    public static func apply(_ pixels: inout [SIMD4<Float>], width: Int, height: Int, sigma: Float) {
        precondition(width > 0 && height > 0 && pixels.count == width * height, "pixel count is not width×height")
        let kernel = BlurKernel(sigma: sigma)
        let groups = max(1, min(columnLanes, width) / 4)
        let length = (max(width, height) + kernel.margin) * groups
        var front = [SIMD16<Float>](repeating: .zero, count: length)
        var back = [SIMD16<Float>](repeating: .zero, count: length)
        pixels.withUnsafeMutableBufferPointer { image in
            front.withUnsafeMutableBufferPointer { front in
                back.withUnsafeMutableBufferPointer { back in
                    let blur = BlockBlur(kernel: kernel, front: front.baseAddress!, back: back.baseAddress!)
                    let image = image.baseAddress!
                    // A side of one pixel needs no pass: every tap reads that pixel.
                    if width > 1 {
                        for y in stride(from: 0, to: height, by: 4) {
                            blur.run(Quad(image + y * width, step: 1, across: width, lines: min(4, height - y)),
                                     count: width, groups: 1)
                        }
                    }
                    if height > 1 {
                        let whole = width / 4 * 4
                        for x in stride(from: 0, to: whole, by: columnLanes) {
                            blur.run(Run(image + x, step: width), count: height, groups: min(columnLanes, whole - x) / 4)
                        }
                        if whole < width {
                            blur.run(Quad(image + whole, step: width, across: 1, lines: width - whole),
                                     count: height, groups: 1)
                        }
                    }
                }
            }
        }
    }
}

/// Where a pass reads and writes: position `p` of group `g` (four lines).
private protocol Lines {
    /// Whether to copy the lines into a buffer for the passes rather than
    /// have the first pass read them and the last write them: for image
    /// columns, whose running sums would each miss the cache.
    static var copiedOut: Bool { get }
    func load(_ p: Int, _ g: Int) -> SIMD16<Float>
    func store(_ value: SIMD16<Float>, _ p: Int, _ g: Int)
}

/// Four image lines `across` apart, pixels `step` apart; one group. Fewer
/// than four (at the image's end) repeat the last, which computes the same
/// values into the same place.
private struct Quad: Lines {
    static var copiedOut: Bool { false }
    let base: UnsafeMutablePointer<SIMD4<Float>>
    let step: Int
    let o1: Int, o2: Int, o3: Int

    init(_ base: UnsafeMutablePointer<SIMD4<Float>>, step: Int, across: Int, lines: Int) {
        self.base = base
        self.step = step
        o1 = min(1, lines - 1) * across
        o2 = min(2, lines - 1) * across
        o3 = min(3, lines - 1) * across
    }

    @inline(__always) func load(_ p: Int, _ g: Int) -> SIMD16<Float> {
        let q = base + p &* step
        return SIMD16(lowHalf: SIMD8(lowHalf: q[0], highHalf: q[o1]), highHalf: SIMD8(lowHalf: q[o2], highHalf: q[o3]))
    }

    @inline(__always) func store(_ value: SIMD16<Float>, _ p: Int, _ g: Int) {
        let q = base + p &* step
        q[0] = value.lowHalf.lowHalf
        q[o1] = value.lowHalf.highHalf
        q[o2] = value.highHalf.lowHalf
        q[o3] = value.highHalf.highHalf
    }
}

/// Adjacent image columns, `step` pixels between rows: group `g` is the four
/// pixels from column 4g on.
private struct Run: Lines {
    static var copiedOut: Bool { true }
    let base: UnsafeMutableRawPointer
    let step: Int

    init(_ base: UnsafeMutablePointer<SIMD4<Float>>, step: Int) {
        self.base = UnsafeMutableRawPointer(base)
        self.step = step * MemoryLayout<SIMD4<Float>>.stride
    }

    @inline(__always) func load(_ p: Int, _ g: Int) -> SIMD16<Float> {
        base.load(fromByteOffset: p &* step &+ g &* 64, as: SIMD16<Float>.self)
    }

    @inline(__always) func store(_ value: SIMD16<Float>, _ p: Int, _ g: Int) {
        base.storeBytes(of: value, toByteOffset: p &* step &+ g &* 64, as: SIMD16<Float>.self)
    }
}

/// A buffer, group-major: each group's `length` positions in a row.
private struct Buffer: Lines {
    static var copiedOut: Bool { false }
    let base: UnsafeMutablePointer<SIMD16<Float>>
    let length: Int

    @inline(__always) func load(_ p: Int, _ g: Int) -> SIMD16<Float> { base[g &* length &+ p] }
    @inline(__always) func store(_ value: SIMD16<Float>, _ p: Int, _ g: Int) { base[g &* length &+ p] = value }
}

/// Blurs one block of lines through two buffers.
private struct BlockBlur {
    let kernel: BlurKernel
    let front: UnsafeMutablePointer<SIMD16<Float>>
    let back: UnsafeMutablePointer<SIMD16<Float>>

    /// Blurs the `count` pixels of each line of `groups` groups in place.
    func run<L: Lines>(_ lines: L, count n: Int, groups: Int) {
        switch kernel {
        case .sampled(let weights):
            // The taps read beyond the ends: copy the lines out with `pad`
            // clamped pixels at each end, then convolve back into place.
            let pad = weights.count - 1
            let padded = Buffer(base: front, length: n + 2 * pad)
            for p in 0..<(n + 2 * pad) {
                let from = min(max(p - pad, 0), n - 1)
                for g in 0..<groups { padded.store(lines.load(from, g), p, g) }
            }
            weights.withUnsafeBufferPointer { convolve(padded, into: lines, count: n, groups: groups, weights: $0) }
        case .boxes(let box):
            // Clamping the image's edges means every pass sees the line
            // extended by copies of its end pixels. Each box pass of that
            // extension differs from the end value only within its reach r + 1
            // of the end, so an intermediate pass keeps that much more at each
            // end (the first r + 1, the second 2(r + 1)) and the next pass clamps
            // its reads there, exactly. The last pass writes the line itself.
            let reach = box.radius + 1
            let a = Buffer(base: front, length: n + 4 * reach), b = Buffer(base: back, length: n + 4 * reach)
            if L.copiedOut {
                for p in 0..<n { for g in 0..<groups { b.store(lines.load(p, g), p, g) } }
                boxPasses(b, a, b, a, b, count: n, reach: reach, groups: groups, box: box)
                for p in 0..<n { for g in 0..<groups { lines.store(b.load(p, g), p, g) } }
            } else {
                boxPasses(lines, a, b, a, lines, count: n, reach: reach, groups: groups, box: box)
            }
        }
    }

    /// The four box passes of `BlurKernel.boxes`, `first` → … → `last`.
    private func boxPasses<F: Lines, L: Lines>(_ first: F, _ one: Buffer, _ two: Buffer, _ three: Buffer, _ last: L,
                                              count n: Int, reach: Int, groups: Int, box: ExtendedBox) {
        precondition(BlurKernel.boxPasses == 4)
        boxPass(first, count: n, into: one, count: n + 2 * reach, shift: -reach, groups: groups, box: box)
        boxPass(one, count: n + 2 * reach, into: two, count: n + 4 * reach, shift: -reach, groups: groups, box: box)
        boxPass(two, count: n + 4 * reach, into: three, count: n + 2 * reach, shift: reach, groups: groups, box: box)
        boxPass(three, count: n + 2 * reach, into: last, count: n, shift: reach, groups: groups, box: box)
    }

    /// Exact taps, symmetric pairs from the outside in and the centre last:
    /// the order `BlurKernel` normalised the weights for. `src` has `radius`
    /// clamped pixels before and after the `count`.
    private func convolve<D: Lines>(_ src: Buffer, into dst: D, count n: Int, groups: Int,
                                    weights w: UnsafeBufferPointer<Float>) {
        let radius = w.count - 1
        for i in 0..<n {
            for g in 0..<groups {
                var acc = SIMD16<Float>.zero
                var k = radius
                while k >= 1 {
                    acc += (src.load(i &+ radius &- k, g) + src.load(i &+ radius &+ k, g)) * w[k]
                    k &-= 1
                }
                acc += src.load(i &+ radius, g) * w[0]
                dst.store(acc, i, g)
            }
        }
    }

    /// One extended box as a running sum, one group's line at a time (the
    /// sum stays in a register): output j is centred on source position
    /// j + shift, and reads beyond the source's `count` clamp to its ends.
    /// O(outputs + min(radius, source)), so a radius far beyond the line costs
    /// no more than the line and its extension.
    ///
    /// Output j is the sum plus its two fractional end taps: the pixel just
    /// left of it (which leaves the sum next) and the one next to enter it.
    /// Indices are clamped only where they can leave the source.
    private func boxPass<S: Lines, D: Lines>(_ src: S, count n: Int, into dst: D, count outputs: Int, shift: Int,
                                             groups: Int, box: ExtendedBox) {
        let r = box.radius
        // Outputs in lo..<hi read only inside the source.
        let lo = min(max(r + 1 - shift, 0), outputs)
        let hi = min(max(n - r - 1 - shift, lo), outputs)
        @inline(__always) func clamp(_ p: Int) -> Int { min(max(p, 0), n - 1) }
        for g in 0..<groups {
            // Sum over source positions shift − r … shift + r, clamped: copies of
            // the first pixel, the pixels inside, copies of the last. Compensated
            // (Kahan): a plain sum of hundreds of pixels drifts by ~r ulps, which
            // would show as a constant image changing by 1e-5 at sigma 400.
            let first = shift - r, last = shift + r
            var sum = SIMD16<Float>.zero, lost = SIMD16<Float>.zero
            @inline(__always) func add(_ x: SIMD16<Float>) {
                let y = x - lost, t = sum + y
                lost = (t - sum) - y
                sum = t
            }
            if first < 0 { add(src.load(0, g) * Float(min(-first, 2 * r + 1))) }
            for p in stride(from: max(first, 0), through: min(last, n - 1), by: 1) { add(src.load(p, g)) }
            if last > n - 1 { add(src.load(n - 1, g) * Float(min(last - (n - 1), 2 * r + 1))) }
            for j in 0..<lo {
                let c = j + shift
                Self.boxStep(src, dst, g, j, before: clamp(c - r - 1), entering: clamp(c + r + 1), leaving: clamp(c - r),
                             box, &sum)
            }
            for j in lo..<hi {
                let c = j &+ shift
                Self.boxStep(src, dst, g, j, before: c &- r &- 1, entering: c &+ r &+ 1, leaving: c &- r, box, &sum)
            }
            for j in hi..<outputs {
                let c = j + shift
                Self.boxStep(src, dst, g, j, before: clamp(c - r - 1), entering: clamp(c + r + 1), leaving: clamp(c - r),
                             box, &sum)
            }
        }
    }

    /// Writes output j; then `leaving` leaves the sum and `entering` joins it.
    @inline(__always)
    private static func boxStep<S: Lines, D: Lines>(_ src: S, _ dst: D, _ g: Int, _ j: Int, before: Int, entering: Int,
                                                    leaving: Int, _ box: ExtendedBox, _ sum: inout SIMD16<Float>) {
        let enter = src.load(entering, g)
        dst.store((sum + (src.load(before, g) + enter) * box.alpha) * box.scale, j, g)
        sum += enter - src.load(leaving, g)
    }
}
