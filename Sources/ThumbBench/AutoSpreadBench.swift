import Foundation
import ThumbCodec
import ThumbImaging
import ThumbRender

/// `--auto-spread [--target T] [--format F] FILE...`: issue 36's `q=auto` targets
/// (Quality.md § How close auto lands). For each photo and lossy format, the `q`
/// found on the canonical rendition is used at four sizes a list asks for — the
/// canonical 512 px and `w=256` at `dpr` 1, 2 and 3 — and each output is scored
/// against its own rendition unencoded: the spread around the target. Then the
/// fixed `q` whose mean score over the same outputs equals the `auto` run's
/// (bytes interpolated between the two integer `q`s around it), and the two
/// runs' total bytes; and the lowest fixed `q` whose worst output scores at
/// least the `auto` run's worst (what a fixed `q` needs to promise as much).
enum AutoSpreadBench {
    /// The sizes: the canonical rendition, then w=256 at dpr 1, 2, 3.
    static let sizes: [(label: String, variant: PreparedVariant)] = [
        ("512", PreparedVariant(width: 512, height: 512, fit: .inside)),
        ("w256", PreparedVariant(width: 256, height: nil)),
        ("w256@2", PreparedVariant(width: 512, height: nil)),
        ("w256@3", PreparedVariant(width: 768, height: nil)),
    ]

    struct Source {
        let name: String
        let bytes: [UInt8]
        let header: ImageHeader
        /// One rendition per size of `sizes`.
        let renditions: [Bitmap]
    }

    static func run(files: [String], target: Int, formats: [OutputFormat]) {
        let sources = files.map(load)
        for format in formats {
            measure(sources, format: format, target: target)
        }
    }

    static func load(_ file: String) -> Source {
        guard let data = FileManager.default.contents(atPath: file) else { QualityCorpus.fail("cannot read \(file)") }
        let bytes = [UInt8](data)
        guard let header = try? ThumbnailPipeline.probe(source: bytes, limits: PipelineLimits()) else {
            QualityCorpus.fail("cannot probe \(file)")
        }
        let renditions = sizes.map { size in
            guard let bitmap = try? ThumbnailPipeline.prepare(source: bytes, variant: size.variant, limits: PipelineLimits()) else {
                QualityCorpus.fail("cannot render \(file) at \(size.label)")
            }
            return bitmap
        }
        return Source(name: (file as NSString).lastPathComponent, bytes: bytes, header: header, renditions: renditions)
    }

    /// Bytes and score of `rendition` encoded at `q` as thumbd answers it (QualityCorpus's scoring).
    static func outcome(_ rendition: Bitmap, format: OutputFormat, q: Int, name: String) -> (bytes: Int, score: Double) {
        guard let corpusFormat = QualityCorpus.Format(rawValue: format.rawValue) else {
            QualityCorpus.fail("\(format.rawValue) is not a lossy format")
        }
        let measured = QualityCorpus.measure(QualityCorpus.Photo(name: name, rendition: rendition), format: corpusFormat) {
            try ThumbnailPipeline.encode($0, format: format, quality: q, background: nil).bytes
        }
        return (measured.bytes, measured.score)
    }

    static func measure(_ sources: [Source], format: OutputFormat, target: Int) {
        print("== \(format.rawValue), target \(target)")
        print("photo  q  " + sizes.map { "\($0.label)(score bytes)" }.joined(separator: "  "))
        var autoScores: [Double] = [], autoBytes = 0
        var probes: [Int] = []
        for source in sources {
            guard let canonical = try? AutoQuality.canonicalRendition(source: source.bytes, header: source.header),
                  let found = try? AutoQuality.search(canonical, format: format, target: target, background: nil) else {
                QualityCorpus.fail("\(source.name): the search failed")
            }
            probes.append(found.encodes)
            var line = String(format: "%@  %d ", source.name, found.q)
            for rendition in source.renditions {
                let (bytes, score) = outcome(rendition, format: format, q: found.q, name: source.name)
                autoScores.append(score)
                autoBytes += bytes
                line += String(format: "  %6.2f %6d", score, bytes)
            }
            print(line)
        }
        let deviations = autoScores.map { $0 - Double(target) }
        let within = deviations.filter { abs($0) <= 3 }.count
        let autoMean = autoScores.reduce(0, +) / Double(autoScores.count)
        print(String(format: "auto: mean score %.2f, spread %+.2f…%+.2f, %d of %d within ±3, total %d bytes; probes median %d max %d",
                     autoMean, deviations.min() ?? 0, deviations.max() ?? 0, within, deviations.count, autoBytes,
                     probes.sorted()[probes.count / 2], probes.max() ?? 0))
        // The fixed q of equal mean score: scores rise with q on average, so bisect.
        var cache: [Int: (mean: Double, worst: Double, bytes: Int)] = [:]
        func fixed(_ q: Int) -> (mean: Double, worst: Double, bytes: Int) {
            if let known = cache[q] { return known }
            var scores: [Double] = [], bytes = 0
            for source in sources {
                for rendition in source.renditions {
                    let result = outcome(rendition, format: format, q: q, name: source.name)
                    scores.append(result.score)
                    bytes += result.bytes
                }
            }
            let value = (scores.reduce(0, +) / Double(scores.count), scores.min() ?? 0, bytes)
            cache[q] = value
            return value
        }
        /// The lowest q in 1…100 where `reaches` holds, assuming it holds from there up (100 if never).
        func lowest(_ reaches: (Int) -> Bool) -> Int {
            var low = 0, high = 100
            while high - low > 1 {
                let mid = (low + high) / 2
                if reaches(mid) { high = mid } else { low = mid }
            }
            return high
        }
        let high = lowest { fixed($0).mean >= autoMean }
        let low = max(1, high - 1)
        let (a, b) = (fixed(low), fixed(high))
        let t = b.mean > a.mean ? min(1, max(0, (autoMean - a.mean) / (b.mean - a.mean))) : 1
        let equalBytes = Double(a.bytes) + t * Double(b.bytes - a.bytes)
        print(String(format: "fixed: q %d mean %.2f %d bytes; q %d mean %.2f %d bytes; at the auto mean (q %.2f) %.0f bytes",
                     low, a.mean, a.bytes, high, b.mean, b.bytes, Double(low) + t, equalBytes))
        print(String(format: "auto ÷ fixed bytes at equal mean score: %.3f (target ≤ 0.85)", Double(autoBytes) / equalBytes))
        let autoWorst = autoScores.min() ?? 0
        let promise = lowest { fixed($0).worst >= autoWorst }
        let p = fixed(promise)
        print(String(format: "fixed q %d is the lowest whose worst output (%.2f) reaches auto's worst (%.2f): mean %.2f, %d bytes; auto ÷ it %.3f",
                     promise, p.worst, autoWorst, p.mean, p.bytes, Double(autoBytes) / Double(p.bytes)))
    }
}
