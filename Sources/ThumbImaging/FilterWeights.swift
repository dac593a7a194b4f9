import Foundation

/// Precomputed contributions of source samples to each output sample along one
/// axis: for output `i`, source indices `start[i] ..< start[i] + count` with
/// weights `weights[i * taps ..< i * taps + count]`, normalised to sum 1.
struct FilterWeights {
    let outputSize: Int
    let taps: Int
    private(set) var start: [Int]
    private(set) var count: [Int]
    private(set) var weights: [Float]

    /// Lanczos-3: sharp, little ringing; the standard for photographic downscaling.
    static func lanczos3(_ x: Double) -> Double {
        let ax = abs(x)
        guard ax < 3 else { return 0 }
        guard ax > 1e-9 else { return 1 }
        let px = Double.pi * x
        return 3 * sin(px) * sin(px / 3) / (px * px)
    }

    /// Weights mapping `inputSize` samples onto `outputSize`, pixel centres aligned.
    /// When shrinking, the kernel is stretched by the scale so every source
    /// sample contributes (no aliasing); when enlarging it keeps its width.
    init(inputSize: Int, outputSize: Int) {
        precondition(inputSize > 0 && outputSize > 0)
        self.outputSize = outputSize
        let scale = Double(inputSize) / Double(outputSize)
        let stretch = max(1, scale)
        let support = 3 * stretch
        taps = Int(ceil(support)) * 2 + 1
        start = [Int](repeating: 0, count: outputSize)
        count = [Int](repeating: 0, count: outputSize)
        weights = [Float](repeating: 0, count: outputSize * taps)
        for i in 0..<outputSize {
            let centre = (Double(i) + 0.5) * scale
            let first = max(0, Int(floor(centre - support)))
            let last = min(inputSize - 1, Int(ceil(centre + support)) - 1)
            var w = [Double]()
            for j in first...max(first, last) {
                w.append(Self.lanczos3((Double(j) + 0.5 - centre) / stretch))
            }
            var total = w.reduce(0, +)
            if abs(total) < 1e-12 {
                // A sample range with no kernel mass (tiny inputs): fall back to the nearest sample.
                w = w.map { _ in 0 }
                w[min(w.count - 1, max(0, Int(centre) - first))] = 1
                total = 1
            }
            start[i] = first
            count[i] = min(w.count, taps)
            for (k, value) in w.prefix(taps).enumerated() { weights[i * taps + k] = Float(value / total) }
        }
    }
}
