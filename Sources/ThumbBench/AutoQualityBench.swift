import Foundation
import ThumbCodec
import ThumbImaging
import ThumbRender

/// `--auto-quality [--runs N] [--target T] FILE...`: one `q=auto` search
/// (SPEC §17, Quality.md § What a search costs) per file and lossy format on the file's
/// canonical 512-px rendition; one line each: "<name> <format> q <Q>
/// encodes <N> <median ms> <min ms>" (the canonical decode not included).
enum AutoQualityBench {
    static func run(files: [String], runs: Int, target: Int) {
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                FileHandle.standardError.write(Data("cannot read \(file)\n".utf8))
                exit(1)
            }
            let source = [UInt8](data)
            guard let header = try? ThumbnailPipeline.probe(source: source, limits: PipelineLimits()),
                  let rendition = try? AutoQuality.canonicalRendition(source: source, header: header) else {
                FileHandle.standardError.write(Data("cannot decode \(file)\n".utf8))
                exit(1)
            }
            let name = (file as NSString).lastPathComponent
            for format in [OutputFormat.jpeg, .webp, .avif, .jxl] {
                var times: [Double] = []
                var found: AutoQuality.Search?
                for _ in 0..<runs {
                    times.append(ContinuousClock().measure {
                        found = try? AutoQuality.search(rendition, format: format, target: target, background: nil)
                    } / .milliseconds(1))
                }
                guard let found else { exit(1) }
                times.sort()
                print(String(format: "%@ %@ q %d encodes %d %.1f %.1f", name, format.rawValue, found.q, found.encodes,
                             times[runs / 2], times[0]))
            }
        }
    }
}
