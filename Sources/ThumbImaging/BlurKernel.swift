import Foundation

/// What `GaussianBlur` runs along each axis for one sigma, and the 1-D kernel
/// that amounts to (`taps`, which the accuracy tests hold against a Gaussian).
///
/// Accuracy bound: the L1 distance between `taps` and the sampled Gaussian of
/// the same sigma (normalised, untruncated), summed over taps, is at most 0.03
/// for every sigma 0.3…400 (the largest is ≈ 0.0243, at σ ≈ 2.9). Since a 2-D
/// blur is the outer product of two such kernels, no blurred value of an image
/// whose values lie in 0…1 is more than that 0.03 away from the true Gaussian
/// blur's.
///
/// Three boxes cannot meet that bound: however wide, three equal boxes stay
/// ≥ 0.035 from a Gaussian in L1 (0.054 when their variance matches it, the
/// usual choice). Four *extended* boxes (Gwosdek et al. 2011: a box whose two
/// end taps carry a fractional weight, so its width is continuous rather than
/// a whole number of pixels) of width 1.67σ each stay ≤ 0.0243 for σ ≥ 2;
/// below that the boxes are too coarse and an exact sampled kernel is cheap
/// (≤ 0.0021: its only error is the tails cut at 3σ).
enum BlurKernel {
    /// Sampled Gaussian over radius ceil(3σ): `weights[k]` is the weight of
    /// offsets ±k (`weights[0]` the centre's), normalised to a float sum of
    /// exactly 1 in the order `GaussianBlur` adds them.
    case sampled(weights: [Float])
    /// `boxPasses` runs of one extended box, each a running sum, so the cost
    /// per pixel does not depend on sigma (each line's ends add ≈ 3.3σ
    /// positions, see `margin`).
    case boxes(ExtendedBox)

    /// Sigmas below this use `.sampled` (radius ≤ 6).
    static let sampledBelow: Float = 2
    static let boxPasses = 4
    /// Each box's width over sigma: minimises the worst L1 error over 2…400
    /// (a variance-matched box would be √3 ≈ 1.73, with a larger error).
    static let boxWidthPerSigma = 1.67

    init(sigma: Float) {
        precondition(sigma > 0 && sigma <= 10_000, "blur sigma must be in (0, 10000], got \(sigma)")
        if sigma < Self.sampledBelow {
            self = .sampled(weights: Self.sampledWeights(sigma: Double(sigma)))
        } else {
            let width = Self.boxWidthPerSigma * Double(sigma)
            self = .boxes(ExtendedBox(variance: width * width / 12))
        }
    }

    /// Pixels of clamped edge the line must carry on each side before a pass.
    var padding: Int {
        switch self {
        case .sampled(let weights): weights.count - 1
        case .boxes: 0
        }
    }

    /// Pixels a line's buffers need beyond the line, both ends together: the
    /// padding, or what the intermediate box passes keep (see `GaussianBlur`),
    /// 4·(radius + 1) ≈ 3.3σ. Bounded by the sigma, not the image.
    var margin: Int {
        switch self {
        case .sampled: 2 * padding
        case .boxes(let box): 4 * (box.radius + 1)
        }
    }

    /// The effective 1-D kernel, offsets −radius…radius, in the floats used.
    var taps: [Double] {
        switch self {
        case .sampled(let weights):
            let w = weights.map(Double.init)
            return w.dropFirst().reversed() + w
        case .boxes(let box):
            let one = [Double(box.alpha * box.scale)]
                + [Double](repeating: Double(box.scale), count: 2 * box.radius + 1) + [Double(box.alpha * box.scale)]
            var kernel = [1.0]
            for _ in 0..<Self.boxPasses { kernel = Self.convolve(kernel, one) }
            return kernel
        }
    }

    private static func sampledWeights(sigma: Double) -> [Float] {
        let radius = max(1, Int((3 * sigma).rounded(.up)))
        let g = (0...radius).map { k in exp(-Double(k * k) / (2 * sigma * sigma)) }
        let total = g[0] + 2 * g.dropFirst().reduce(0, +)
        var weights = g.map { Float($0 / total) }
        // An opaque image must stay exactly opaque: sum the side taps in the
        // order the blur does ((a + b)·w from the outside in, the centre last)
        // and give the centre whatever makes that float sum exactly 1.
        var sides: Float = 0
        for k in stride(from: radius, through: 1, by: -1) { sides += (1 + 1) * weights[k] }
        var centre = 1 - sides
        for _ in 0..<8 where sides + centre != 1 {
            centre = sides + centre > 1 ? centre.nextDown : centre.nextUp
        }
        precondition(sides + centre == 1, "no centre weight sums to 1")
        weights[0] = centre
        return weights
    }

    private static func convolve(_ a: [Double], _ b: [Double]) -> [Double] {
        var out = [Double](repeating: 0, count: a.count + b.count - 1)
        for i in a.indices { for j in b.indices { out[i + j] += a[i] * b[j] } }
        return out
    }
}

/// A box of `2·radius + 1` taps of weight 1 plus one tap of weight `alpha`
/// (0 ≤ alpha < 1) at each end, all times `scale` = 1 / (2·radius + 1 + 2·alpha):
/// a box of any real width, built to a given variance (Gwosdek, Grewenig,
/// Bruhn, Weickert, "Theoretical foundations of Gaussian convolution by
/// extended box filtering", 2011).
struct ExtendedBox: Equatable {
    let radius: Int
    let alpha: Float
    let scale: Float

    init(variance v: Double) {
        let r = max(0, Int((0.5 * (12 * v + 1).squareRoot() - 0.5).rounded(.down)))
        let exact = Double(2 * r + 1) * (Double(r * (r + 1)) - 3 * v) / (6 * (v - Double((r + 1) * (r + 1))))
        // A multiple of 2⁻¹² keeps 2r + 1 + 2α exact in a float (r < 2048, so
        // σ up to ≈ 2400), and so the running sums of an opaque alpha channel.
        let ideal = (min(max(exact, 0), 1) * 4096).rounded()
        // An opaque alpha channel sums to exactly that weight and must come
        // out exactly 1, but x·(1/x) is not always 1 in floats, and for some
        // weights no float multiplies back to 1: then move α by 2⁻¹² (a change
        // of the kernel far below its error bound) until one does.
        var found: (alpha: Float, scale: Float)?
        for k in [0, 1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6, 7, -7, 8, -8] where found == nil {
            let alpha = Float(min(max(ideal + Double(k), 0), 4095) / 4096)
            found = Self.reciprocal(of: Float(2 * r + 1) + 2 * alpha).map { (alpha, $0) }
        }
        let chosen = found ?? (Float(ideal / 4096), 1 / (Float(2 * r + 1) + 2 * Float(ideal / 4096)))
        precondition(found != nil || r >= 2048, "no weight near \(2 * r + 1) has a float reciprocal")
        self.alpha = chosen.alpha
        self.scale = chosen.scale
        self.radius = r
    }

    /// A float s with weight·s == 1 exactly, if one lies within a few ulps of 1/weight.
    private static func reciprocal(of weight: Float) -> Float? {
        var scale = 1 / weight
        for _ in 0..<4 where weight * scale != 1 {
            scale = weight * scale > 1 ? scale.nextDown : scale.nextUp
        }
        return weight * scale == 1 ? scale : nil
    }
}
