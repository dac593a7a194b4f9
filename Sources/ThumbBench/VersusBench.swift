import Foundation
import ThumbCodec
import ThumbImaging

/// The thumbd side of Tests/Benchmarks/quality-bench.sh (bytes at equal
/// score against another encoder; SPEC §17 scoring, so only the encoder is
/// judged: every output is scored against thumbd's own lossless 512-px
/// rendition of the photo, which the other encoder is given as a PNG).
///
/// `--renditions DIR FILE...`: writes each photo's rendition as DIR/NAME.png.
///
/// `--versus DIR --labels L,L... FILE...`: for each photo, format (jpeg, webp,
/// avif, jxl) and label whose file exists, scores DIR/NAME.LABEL.FORMAT, and for
/// jxl thumbd's own JPEG at q 80 too (label `thumbd-jpeg80`: JPEG XL's bytes
/// against thumbd's JPEG at the same score, issue 37), then finds by bisection the
/// lowest thumbd `q` whose score reaches it and interpolates log bytes between
/// `q − 1` and `q` at exactly that score; one line per photo, format and label:
/// "NAME FORMAT LABEL score bytes q thumbd-bytes ratio", then the median ratio
/// per format and label (per image, not on the mean).
///
/// `--encode-cpu Q FILE...` (FILE: the PNG renditions): process CPU time of
/// one encode per format at `q`, one pass over the files; "FORMAT median-ms".
enum VersusBench {
    static func renditions(directory: String, files: [String]) {
        for photo in QualityCorpus(files: files).photos {
            guard let png = try? PNGEncoder.encode(photo.rendition) else { QualityCorpus.fail("\(photo.name): PNG") }
            FileManager.default.createFile(atPath: "\(directory)/\(photo.name).png", contents: Data(png))
        }
    }

    static let formats: [QualityCorpus.Format] = [.jpeg, .webp, .avif, .jxl]

    static func encode(_ bitmap: Bitmap, _ format: QualityCorpus.Format, q: Int) throws -> [UInt8] {
        switch format {
        case .jpeg: try JPEGEncoder.encode(bitmap, settings: QualityScale.jpeg(q))
        case .webp: try WebPEncoder.encode(bitmap, settings: QualityScale.webp(q))
        case .avif: try AVIFEncoder.encode(bitmap, settings: QualityScale.avif(q))
        case .jxl: try JXLEncoder.encode(bitmap, settings: QualityScale.jxl(q))
        }
    }

    static func versus(directory: String, labels: [String], files: [String]) {
        var ratios: [String: [Double]] = [:]
        for photo in QualityCorpus(files: files).photos {
            for format in formats {
                var cache: [Int: QualityCorpus.Outcome] = [:]
                func at(_ q: Int) -> QualityCorpus.Outcome {
                    if let known = cache[q] { return known }
                    let outcome = QualityCorpus.measure(photo, format: format) { try encode($0, format, q: q) }
                    cache[q] = outcome
                    return outcome
                }
                var others: [(label: String, bytes: [UInt8])] = labels.compactMap { label in
                    let path = "\(directory)/\(photo.name).\(label).\(format.rawValue)"
                    return FileManager.default.contents(atPath: path).map { (label, [UInt8]($0)) }
                }
                if format == .jxl {
                    guard let jpeg = try? encode(photo.rendition, .jpeg, q: 80) else { QualityCorpus.fail("\(photo.name): JPEG") }
                    others.append(("thumbd-jpeg80", jpeg))
                }
                for (label, data) in others {
                    let target = QualityCorpus.score(data, against: photo.rendition, name: "\(photo.name) \(label)")
                    // Lowest q in 1…100 whose score reaches the target (scores taken as rising with q).
                    var low = 1, high = 100
                    while low < high {
                        let mid = (low + high) / 2
                        if at(mid).score >= target { high = mid } else { low = mid + 1 }
                    }
                    let upper = at(low)
                    var bytes = Double(upper.bytes)
                    if low > 1, upper.score > target {
                        let lower = at(low - 1)
                        if lower.score < target {
                            let t = (target - lower.score) / (upper.score - lower.score)
                            bytes = exp(log(Double(lower.bytes)) * (1 - t) + log(Double(upper.bytes)) * t)
                        }
                    }
                    let ratio = bytes / Double(data.count)
                    ratios["\(format.rawValue) \(label)", default: []].append(ratio)
                    print(String(format: "%@ %@ %@ score %.2f bytes %d thumbd q %d (score %.2f) bytes %.0f ratio %.3f",
                                 photo.name, format.rawValue, label, target, data.count, low, upper.score, bytes, ratio))
                    fflush(nil)
                }
            }
        }
        for key in ratios.keys.sorted() {
            let values = ratios[key]!
            print(String(format: "summary %@: bytes at equal score, thumbd / other: median %.3f, geometric mean %.3f (%d photos)",
                         key, median(values), exp(values.map(log).reduce(0, +) / Double(values.count)), values.count))
        }
    }

    static func encodeCPU(q: Int, files: [String]) {
        let bitmaps = files.map { file -> Bitmap in
            guard let data = FileManager.default.contents(atPath: file),
                  let bitmap = try? ImageDecoder.decodeBitmap([UInt8](data), maxPixels: 1 << 26).bitmap else {
                QualityCorpus.fail("cannot decode \(file)")
            }
            return bitmap
        }
        for format in formats {
            var times: [Double] = []
            for bitmap in bitmaps {
                let start = processCPUMilliseconds()
                guard (try? encode(bitmap, format, q: q)) != nil else { QualityCorpus.fail("encode failed") }
                times.append(processCPUMilliseconds() - start)
            }
            print(String(format: "%@ %.2f", format.rawValue, median(times)))
        }
    }
}
