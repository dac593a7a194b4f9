import Foundation
import ThumbCodec
import ThumbImaging

/// `--ssimulacra2 REFERENCE DISTORTED...`: the SSIMULACRA2 score of each
/// distorted image against the reference (any format thumbd decodes, same
/// sides), and its cost, one thread; one line per image: "<name> <score>
/// <median ms> <min ms> <median CPU ms> <min CPU ms>". q=auto scores ~7
/// renditions of ≤ 512 px per search (SPEC §17), so 512×512 is the case to watch.
///
/// `--ssimulacra2 --jpeg Q,Q... [--out DIR] REFERENCE`: the same for the
/// reference (flattened on white) through thumbd's JPEG encoder at each
/// quality, decoded by thumbd; `--out` keeps the JPEGs as DIR/NAME-qQ.jpg.
enum QualityBench {
    static func run(files: [String], runs: Int, jpegQualities: [Int], output: String?) {
        guard files.count >= 2 || (files.count == 1 && !jpegQualities.isEmpty) else {
            FileHandle.standardError.write(Data("--ssimulacra2 needs a reference and a distorted image\n".utf8))
            exit(2)
        }
        let reference = decode(files[0])
        let stem = ((files[0] as NSString).lastPathComponent as NSString).deletingPathExtension
        var cases = files.dropFirst().map { (($0 as NSString).lastPathComponent, decode($0)) }
        for q in jpegQualities {
            guard let jpeg = try? JPEGEncoder.encode(reference.flattened(), quality: q),
                  let decoded = try? ImageDecoder.decodeBitmap(jpeg, maxPixels: 1 << 26).bitmap else {
                FileHandle.standardError.write(Data("cannot encode \(files[0]) at q \(q)\n".utf8))
                exit(1)
            }
            let name = "\(stem)-q\(q).jpg"
            if let output { FileManager.default.createFile(atPath: output + "/" + name, contents: Data(jpeg)) }
            cases.append((name, decoded))
        }
        for (file, distorted) in cases {
            var score = 0.0
            var times: [Double] = [], cpuTimes: [Double] = []
            for _ in 0..<runs {
                let cpuStart = threadCPUMilliseconds()
                let elapsed = ContinuousClock().measure {
                    do {
                        score = try SSIMULACRA2.score(reference: reference, distorted: distorted)
                    } catch {
                        FileHandle.standardError.write(Data("\(file): \(error)\n".utf8))
                        exit(1)
                    }
                }
                cpuTimes.append(threadCPUMilliseconds() - cpuStart)
                times.append(elapsed / .milliseconds(1))
            }
            times.sort()
            cpuTimes.sort()
            print(String(format: "%@ %.8f %.2f %.2f %.2f %.2f", file, score,
                         times[runs / 2], times[0], cpuTimes[runs / 2], cpuTimes[0]))
        }
    }

    private static func decode(_ file: String) -> Bitmap {
        guard let data = FileManager.default.contents(atPath: file),
              let bitmap = try? ImageDecoder.decodeBitmap([UInt8](data), maxPixels: 1 << 26).bitmap else {
            FileHandle.standardError.write(Data("cannot decode \(file)\n".utf8))
            exit(1)
        }
        return bitmap
    }
}
