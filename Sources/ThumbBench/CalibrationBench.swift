import Foundation
import ThumbCodec
import ThumbImaging

/// `ThumbBench --calibrate [--out FILE] FILE...`: the tables of `QualityScale`
/// (SPEC §17). Each photo is rendered by thumbd's scaler to 512 px on its long
/// side; JPEG is encoded at every `q` 1…100 (`QualityScale.jpeg`), and WebP,
/// AVIF and JPEG XL at every candidate of the one setting their table maps
/// (WebP's quality 0…100, AVIF's quantizer 63…0, JPEG XL's distance 25…0.1 on
/// a geometric ladder), the rest of their settings being `QualityScale`'s.
/// Each output is scored against the rendition unencoded. For each `q` the
/// candidate whose mean score over the corpus is closest to JPEG's mean at that
/// `q` is taken, never a lower one than `q − 1`'s (so the table is monotone),
/// and `q` 100 takes the best candidate (the encoder's best lossy setting).
/// Prints the per-q mean scores (and mean bytes) of the four formats through
/// the new tables and the §17 check at q 50…95; writes the tables as Swift to
/// FILE (Sources/ThumbCodec/QualityScale+Tables.swift) with `--out`.
enum CalibrationBench {
    struct Candidates {
        let format: QualityCorpus.Format
        /// Ascending quality.
        let values: [Double]
        let encode: (Bitmap, Double) throws -> [UInt8]
    }

    static func run(files: [String], output: String?) {
        let corpus = QualityCorpus(files: files)
        let qs = Array(1...100)
        let jpeg = means(corpus, .jpeg, values: qs.map(Double.init)) { try JPEGEncoder.encode($0, settings: QualityScale.jpeg(Int($1))) }
        let jxlDistances = stride(from: 0, through: 113, by: 1).map { 0.1 * pow(1.05, Double($0)) }.filter { $0 <= 25 }.reversed()
        let candidates = [
            Candidates(format: .webp, values: (0...100).map(Double.init)) {
                try WebPEncoder.encode($0, settings: QualityScale.webpSettings(quality: Float($1)))
            },
            Candidates(format: .avif, values: (0...63).reversed().map(Double.init)) {
                try AVIFEncoder.encode($0, settings: QualityScale.avifSettings(quantizer: Int($1)))
            },
            Candidates(format: .jxl, values: Array(jxlDistances) + [0.1]) {
                try JXLEncoder.encode($0, settings: QualityScale.jxlSettings(distance: Float($1)))
            },
        ]
        var tables: [QualityCorpus.Format: [Double]] = [:]
        var chosenMeans: [QualityCorpus.Format: [(score: Double, bytes: Double)]] = [:]
        for candidate in candidates {
            let scored = means(corpus, candidate.format, values: candidate.values, encode: candidate.encode)
            var index = 0
            var table: [Double] = [], chosen: [(Double, Double)] = []
            for q in qs {
                if q == 100 {
                    index = candidate.values.count - 1
                } else {
                    let target = jpeg[q - 1].score
                    var best = index
                    for i in index..<candidate.values.count where abs(scored[i].score - target) < abs(scored[best].score - target) {
                        best = i
                    }
                    index = best
                }
                table.append(candidate.values[index])
                chosen.append(scored[index])
            }
            tables[candidate.format] = table
            chosenMeans[candidate.format] = chosen
        }
        print("q  jpeg(score bytes)  webp(setting score bytes)  avif(quantizer score bytes)  jxl(distance score bytes)")
        for q in qs {
            var line = String(format: "%3d  %6.2f %6.0f", q, jpeg[q - 1].score, jpeg[q - 1].bytes)
            for format in [QualityCorpus.Format.webp, .avif, .jxl] {
                line += String(format: "  %6.2f %6.2f %6.0f", tables[format]![q - 1], chosenMeans[format]![q - 1].score,
                               chosenMeans[format]![q - 1].bytes)
            }
            print(line)
        }
        print("SPEC §17 check (mean score minus JPEG's, q 50…95 step 5):")
        var worst = 0.0
        for q in stride(from: 50, through: 95, by: 5) {
            var line = String(format: "q %d jpeg %.2f", q, jpeg[q - 1].score)
            for format in [QualityCorpus.Format.webp, .avif, .jxl] {
                let delta = chosenMeans[format]![q - 1].score - jpeg[q - 1].score
                worst = max(worst, abs(delta))
                line += String(format: "  %@ %.2f (%+.2f)", format.rawValue, chosenMeans[format]![q - 1].score, delta)
            }
            print(line)
        }
        print(String(format: "largest |difference| %.2f (target ≤ 3)", worst))
        if let output {
            let source = swiftTables(webp: tables[.webp]!, avif: tables[.avif]!, jxl: tables[.jxl]!,
                                     jpegMeans: jpeg.map(\.score), photos: corpus.photos.count)
            FileManager.default.createFile(atPath: output, contents: Data(source.utf8))
        }
    }

    /// Mean score and bytes over the corpus of each value.
    static func means(_ corpus: QualityCorpus, _ format: QualityCorpus.Format, values: [Double],
                      encode: (Bitmap, Double) throws -> [UInt8]) -> [(score: Double, bytes: Double)] {
        values.map { value in
            let outcomes = corpus.photos.map { photo in QualityCorpus.measure(photo, format: format) { try encode($0, value) } }
            return (outcomes.map(\.score).reduce(0, +) / Double(outcomes.count),
                    outcomes.map { Double($0.bytes) }.reduce(0, +) / Double(outcomes.count))
        }
    }

    static func swiftTables(webp: [Double], avif: [Double], jxl: [Double], jpegMeans: [Double], photos: Int) -> String {
        func rows(_ values: [String]) -> String {
            stride(from: 0, to: values.count, by: 10).map { start in
                "        " + values[start..<min(values.count, start + 10)].joined(separator: ", ") + ","
            }.joined(separator: "\n")
        }
        return """
        // Written by `ThumbBench --calibrate --out` (Tests/Benchmarks/calibrate-quality.sh) on the
        // \(photos) photos of Tests/Benchmarks/quality-corpus at 512 px; do not edit by hand.
        // Entry q − 1 is thumbd's q (Quality.md § The scale).

        extension QualityScale {
            /// libwebp's quality for q 1…100.
            static let webpQualities: [UInt8] = [
        \(rows(webp.map { String(Int($0)) }))
            ]

            /// AVIF's colour quantizer for q 1…100.
            static let avifQuantizers: [UInt8] = [
        \(rows(avif.map { String(Int($0)) }))
            ]

            /// JPEG XL's butteraugli distance for q 1…100.
            static let jxlDistances: [Float] = [
        \(rows(jxl.map { String(format: "%.3f", $0) }))
            ]

            /// JPEG's mean score over the corpus at q 1…100 (SSIMULACRA2, 512 px):
            /// by the calibration, every format's too. `q=auto`'s search starts where
            /// it predicts the target.
            public static let meanScores: [Double] = [
        \(rows(jpegMeans.map { String(format: "%.2f", $0) }))
            ]
        }

        """
    }
}
