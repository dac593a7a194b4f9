import Foundation
import ThumbCodec
import ThumbImaging

/// `ThumbBench --jxl-efforts [--runs N] [--q Q] FILE...`: each file decoded,
/// scaled by thumbd's scaler to 512 px on its long side, then encoded by
/// `JXLEncoder` at efforts 3…7, and by `AVIFEncoder` at the same `q` for
/// comparison; one line per file and encoder: bytes, median and minimum
/// milliseconds of the thread's CPU time (the encoders run on the calling
/// thread, as in a worker, so a loaded host does not inflate them). How
/// `JXLEncoder.defaultEffort` was chosen; build with -c release.
enum JXLEffortBench {
    static func run(files: [String], runs: Int, quality: Int) {
        for file in files {
            guard let data = FileManager.default.contents(atPath: file),
                  let (bitmap, header) = try? ImageDecoder.decodeBitmap([UInt8](data), maxPixels: 100_000_000, allowJPEGXL: true) else {
                FileHandle.standardError.write(Data("cannot decode \(file)\n".utf8))
                exit(1)
            }
            let long = max(header.displayedWidth, header.displayedHeight)
            let w = max(1, header.displayedWidth * 512 / long), h = max(1, header.displayedHeight * 512 / long)
            let small = ThumbnailRenderer.render(bitmap, orientation: header.orientation,
                                                 geometry: ThumbnailGeometry(scaledWidth: w, scaledHeight: h, width: w, height: h))
            let name = (file as NSString).lastPathComponent
            for effort in 3...7 {
                report("\(name) \(w)x\(h) q\(quality) jxl effort \(effort)", runs: runs) {
                    (try? JXLEncoder.encode(small, quality: quality, effort: effort).count) ?? -1
                }
            }
            report("\(name) \(w)x\(h) q\(quality) avif speed \(QualityScale.avif(quality).speed)", runs: runs) {
                (try? AVIFEncoder.encode(small, quality: quality).count) ?? -1
            }
        }
    }

    private static func report(_ label: String, runs: Int, _ encode: () -> Int) {
        var times: [Double] = []
        var bytes = 0
        for _ in 0..<runs {
            let start = threadCPU()
            bytes = encode()
            times.append((threadCPU() - start) * 1000)
        }
        times.sort()
        print(String(format: "%@: %d bytes, CPU median %.1f ms, min %.1f ms", label, bytes, times[times.count / 2], times[0]))
    }

    private static func threadCPU() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}
