import Foundation
import ThumbCodec
import ThumbImaging

/// `ThumbBench --levers FORMAT [--alpha FILE,FILE...] FILE...`: each encoder
/// lever judged by bytes at equal SSIMULACRA2 score, not bytes at equal
/// setting. Every configuration of FORMAT (jpeg, webp, avif) encodes each photo's
/// 512-px rendition along a ladder of its quality setting; per photo, log bytes
/// are interpolated linearly in score at the scores 60, 65 … 90 both curves
/// reach, and the configuration's ratio to the first (today's settings) is the
/// exponential of the mean difference (a Bjøntegaard-style rate). CPU: the
/// median thread CPU time of one encode over the whole ladder and corpus.
/// `--alpha` names translucent images for AVIF's alpha quantizer, judged the
/// same way (SPEC §17's translucent rule is in `SSIMULACRA2.score`).
enum LeverBench {
    struct Config: Sendable {
        let name: String
        let encode: @Sendable (Bitmap, Double) throws -> [UInt8]
    }

    static let targets = stride(from: 60.0, through: 90.0, by: 5.0).map { $0 }

    static func run(format: String, files: [String], alphaFiles: [String]) {
        let corpus = QualityCorpus(files: files)
        switch format {
        case "jpeg": compare(corpus, .jpeg, ladder: stride(from: 30.0, through: 98.0, by: 4.0).map { $0 }, jpegConfigs)
        case "webp": compare(corpus, .webp, ladder: stride(from: 30.0, through: 98.0, by: 4.0).map { $0 }, webpConfigs)
        case "avif":
            let ladder = stride(from: 6.0, through: 50.0, by: 4.0).map { $0 }
            compare(corpus, .avif, ladder: ladder, avifConfigs)
            if !alphaFiles.isEmpty {
                print("alpha quantizer (translucent images, colour quantizer on the ladder):")
                compare(QualityCorpus(files: alphaFiles), .avif, ladder: ladder, avifAlphaConfigs)
            }
        default: QualityCorpus.fail("--levers takes jpeg, webp or avif")
        }
    }

    static let jpegConfigs: [Config] = [
        Config(name: "baseline annexK 4:2:0 (today)") { try JPEGEncoder.encode($0, settings: .init(quality: Int($1))) },
        Config(name: "progressive") { try JPEGEncoder.encode($0, settings: .init(quality: Int($1), progressive: true)) },
        Config(name: "robidoux") { try JPEGEncoder.encode($0, settings: .init(quality: Int($1), table: .robidoux)) },
        Config(name: "progressive robidoux") {
            try JPEGEncoder.encode($0, settings: .init(quality: Int($1), progressive: true, table: .robidoux))
        },
        Config(name: "4:4:4") { try JPEGEncoder.encode($0, settings: .init(quality: Int($1), fullChroma: true)) },
        Config(name: "progressive 4:4:4") {
            try JPEGEncoder.encode($0, settings: .init(quality: Int($1), progressive: true, fullChroma: true))
        },
        Config(name: "progressive robidoux 4:4:4") {
            try JPEGEncoder.encode($0, settings: .init(quality: Int($1), progressive: true, fullChroma: true, table: .robidoux))
        },
    ]

    static func webp(_ change: @escaping @Sendable (inout WebPEncoder.Settings) -> Void)
        -> @Sendable (Bitmap, Double) throws -> [UInt8] {
        { bitmap, q in
            var settings = WebPEncoder.Settings(quality: Float(q))
            change(&settings)
            return try WebPEncoder.encode(bitmap, settings: settings)
        }
    }

    static let webpConfigs: [Config] = [
        Config(name: "method 4 (today)", encode: webp { _ in }),
        Config(name: "method 3", encode: webp { $0.method = 3 }),
        Config(name: "method 5", encode: webp { $0.method = 5 }),
        Config(name: "method 6", encode: webp { $0.method = 6 }),
        Config(name: "sharp_yuv", encode: webp { $0.sharpYUV = true }),
        Config(name: "filter 20", encode: webp { $0.filterStrength = 20 }),
        Config(name: "filter 40", encode: webp { $0.filterStrength = 40 }),
        Config(name: "filter 80", encode: webp { $0.filterStrength = 80 }),
        Config(name: "sharpness 4", encode: webp { $0.filterSharpness = 4 }),
        Config(name: "sns 25", encode: webp { $0.snsStrength = 25 }),
        Config(name: "sns 80", encode: webp { $0.snsStrength = 80 }),
        Config(name: "segments 2", encode: webp { $0.segments = 2 }),
        Config(name: "method 5 sharp_yuv", encode: webp { $0.method = 5; $0.sharpYUV = true }),
        Config(name: "method 6 sharp_yuv", encode: webp { $0.method = 6; $0.sharpYUV = true }),
    ]

    static func avif(_ change: @escaping @Sendable (inout AVIFEncoder.Settings) -> Void)
        -> @Sendable (Bitmap, Double) throws -> [UInt8] {
        { bitmap, quantizer in
            var settings = AVIFEncoder.Settings(quantizer: Int(quantizer))
            change(&settings)
            return try AVIFEncoder.encode(bitmap, settings: settings)
        }
    }

    static let avifConfigs: [Config] = [
        Config(name: "aom speed 9 4:2:0 (today)", encode: avif { _ in }),
        Config(name: "speed 8", encode: avif { $0.speed = 8 }),
        Config(name: "speed 7", encode: avif { $0.speed = 7 }),
        Config(name: "speed 6", encode: avif { $0.speed = 6 }),
        Config(name: "speed 5", encode: avif { $0.speed = 5 }),
        Config(name: "speed 4", encode: avif { $0.speed = 4 }),
        Config(name: "speed 9 tune=ssim", encode: avif { $0.options = [("tune", "ssim")] }),
        Config(name: "speed 6 tune=ssim", encode: avif { $0.speed = 6; $0.options = [("tune", "ssim")] }),
        Config(name: "speed 9 4:4:4", encode: avif { $0.fullChroma = true }),
        Config(name: "speed 6 4:4:4", encode: avif { $0.speed = 6; $0.fullChroma = true }),
        Config(name: "speed 6 adaptive quantizer", encode: avif { $0.speed = 6; $0.adaptiveQuantizer = true }),
        Config(name: "speed 6 enable-chroma-deltaq=1", encode: avif { $0.speed = 6; $0.options = [("enable-chroma-deltaq", "1")] }),
        Config(name: "speed 6 enable-qm=1", encode: avif { $0.speed = 6; $0.options = [("enable-qm", "1")] }),
        Config(name: "speed 6 deltaq-mode=0", encode: avif { $0.speed = 6; $0.options = [("deltaq-mode", "0")] }),
        Config(name: "speed 6 sharpness=2", encode: avif { $0.speed = 6; $0.options = [("sharpness", "2")] }),
    ]

    static let avifAlphaConfigs: [Config] = [
        Config(name: "alpha lossless (today)", encode: avif { _ in }),
        Config(name: "alpha quantizer 8", encode: avif { $0.alphaQuantizer = 8 }),
        Config(name: "alpha quantizer 16", encode: avif { $0.alphaQuantizer = 16 }),
        Config(name: "alpha = colour quantizer", encode: avif { $0.alphaQuantizer = $0.quantizer }),
    ]

    static func compare(_ corpus: QualityCorpus, _ format: QualityCorpus.Format, ladder: [Double], _ configs: [Config]) {
        var baseline: [[QualityCorpus.Outcome]] = []
        for (index, config) in configs.enumerated() {
            var curves: [[QualityCorpus.Outcome]] = []
            var cpu: [Double] = []
            for photo in corpus.photos {
                let curve = ladder.map { setting in
                    QualityCorpus.measure(photo, format: format) { try config.encode($0, setting) }
                }
                cpu += curve.map(\.cpu)
                curves.append(curve)
            }
            if index == 0 { baseline = curves }
            let (ratio, points, perTarget) = rate(curves, against: baseline)
            let bytes = curves.map { $0.map { Double($0.bytes) }.reduce(0, +) }.reduce(0, +)
            let baseBytes = baseline.map { $0.map { Double($0.bytes) }.reduce(0, +) }.reduce(0, +)
            print(String(format: "%@ %@: bytes at equal score %.3f× (%d points; by score %@), CPU per encode median %.1f ms (%.2f× first), bytes at equal setting %.3f×",
                         format.rawValue, config.name, ratio, points,
                         perTarget.map { String(format: "%.0f:%.3f", $0.0, $0.1) }.joined(separator: " "),
                         median(cpu), median(cpu) / max(0.001, baselineCPU(index == 0 ? cpu : nil)), bytes / baseBytes))
            fflush(nil)   // each line as it comes, also into a file
        }
    }

    nonisolated(unsafe) private static var firstCPU = 0.0
    private static func baselineCPU(_ cpu: [Double]?) -> Double {
        if let cpu { firstCPU = median(cpu) }
        return firstCPU
    }

    /// The mean log-bytes difference at the target scores both curves of a photo reach.
    static func rate(_ curves: [[QualityCorpus.Outcome]], against base: [[QualityCorpus.Outcome]])
        -> (Double, Int, [(Double, Double)]) {
        var all: [Double] = []
        var byTarget: [(Double, Double)] = []
        for target in targets {
            var diffs: [Double] = []
            for (curve, reference) in zip(curves, base) {
                if let a = logBytes(at: target, curve), let b = logBytes(at: target, reference) { diffs.append(a - b) }
            }
            all += diffs
            if !diffs.isEmpty { byTarget.append((target, exp(diffs.reduce(0, +) / Double(diffs.count)))) }
        }
        return (all.isEmpty ? .nan : exp(all.reduce(0, +) / Double(all.count)), all.count, byTarget)
    }

    /// log(bytes) at `score` on a curve, linear between the two neighbouring
    /// points once sorted by score; nil outside the curve's range.
    static func logBytes(at score: Double, _ curve: [QualityCorpus.Outcome]) -> Double? {
        let points = curve.sorted { $0.score < $1.score }
        guard let first = points.first, let last = points.last, score >= first.score, score <= last.score else { return nil }
        for (a, b) in zip(points, points.dropFirst()) where score >= a.score && score <= b.score {
            let t = b.score > a.score ? (score - a.score) / (b.score - a.score) : 0
            return log(Double(a.bytes)) * (1 - t) + log(Double(b.bytes)) * t
        }
        return nil
    }
}
