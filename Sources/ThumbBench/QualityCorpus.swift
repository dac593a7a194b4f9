import Foundation
import ThumbCodec
import ThumbImaging
import ThumbRender

/// The photos a quality measurement runs on, each rendered as thumbd renders
/// it (`ThumbnailPipeline.prepare`, `w=512&h=512&fit=inside`), and how each
/// lossy format's output scores against that rendition unencoded (SPEC §17:
/// SSIMULACRA2; a JPEG against the rendition flattened on white).
struct QualityCorpus {
    struct Photo {
        let name: String
        let rendition: Bitmap
    }

    enum Format: String, CaseIterable { case jpeg, webp, avif, jxl }

    let photos: [Photo]

    init(files: [String], side: Int = 512) {
        photos = files.map { file in
            guard let data = FileManager.default.contents(atPath: file),
                  let bitmap = try? ThumbnailPipeline.prepare(source: [UInt8](data),
                                                              variant: PreparedVariant(width: side, height: side, fit: .inside),
                                                              limits: PipelineLimits()) else {
                QualityCorpus.fail("cannot render \(file)")
            }
            return Photo(name: ((file as NSString).lastPathComponent as NSString).deletingPathExtension, rendition: bitmap)
        }
    }

    /// One encode: its bytes, its score, and the thread's CPU time it took (ms).
    struct Outcome {
        let bytes: Int
        let score: Double
        let cpu: Double
    }

    static func measure(_ photo: Photo, format: Format, encode: (Bitmap) throws -> [UInt8]) -> Outcome {
        let reference = format == .jpeg ? photo.rendition.flattened() : photo.rendition
        let start = processCPUMilliseconds()
        let encoded: [UInt8]
        do { encoded = try encode(reference) } catch { fail("\(photo.name) \(format): \(error)") }
        let cpu = processCPUMilliseconds() - start
        return Outcome(bytes: encoded.count, score: score(encoded, against: reference, name: photo.name), cpu: cpu)
    }

    static func score(_ encoded: [UInt8], against reference: Bitmap, name: String) -> Double {
        guard let decoded = try? ImageDecoder.decodeBitmap(encoded, maxPixels: 1 << 26, allowJPEGXL: true).bitmap else {
            fail("\(name): cannot decode an encoded rendition")
        }
        do { return try SSIMULACRA2.score(reference: reference, distorted: decoded) } catch { fail("\(name): \(error)") }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(1)
    }
}

/// The process's CPU time, not the thread's: SVT-AV1 encodes on threads of its own.
func processCPUMilliseconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
    return Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1_000_000
}

func threadCPUMilliseconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1_000_000
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted.count % 2 == 1 ? sorted[sorted.count / 2]
        : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}
