import Foundation
import ThumbImaging
import ThumbRender

// In-process pipeline benchmark: decode + scale + encode of each file, in
// memory, repeated; prints one line per file: "<name> <median ms> <min ms>".
// Usage: ThumbBench [--runs N] [--w N] [--h N] [--fit F] [--gravity G] [--format F] FILE...
//        (--gravity attention computes the original's focus in every run: a first render's cost)
//        ThumbBench --blur-bench [--runs N]   (blur and sharpen alone; see BlurBench)
//        ThumbBench --ssimulacra2 [--runs N] [--jpeg Q,Q... [--out DIR]] REFERENCE [DISTORTED...]
//          (the quality metric; see QualityBench)
//        ThumbBench --animate [--runs N] [--w N] [--h N] [--fit F] [--q Q] [--out FILE] FILE...
//          (animated GIF/WebP → animated WebP; see AnimationBench, anim-bench.sh)
//        ThumbBench --auto-quality [--runs N] [--target T] FILE...   (q=auto's search per format; AutoQualityBench)
//        ThumbBench --auto-spread [--target T] [--format F] FILE...   (q=auto at 4 sizes against fixed q; AutoSpreadBench)
//        ThumbBench --jxl-efforts [--runs N] [--q Q] FILE...   (JPEG XL efforts 3…7 and AVIF at 512 px; JXLEffortBench)
//        ThumbBench --calibrate [--out FILE] FILE...   (QualityScale's tables; CalibrationBench, calibrate-quality.sh)
//        ThumbBench --renditions DIR FILE... | --versus DIR --labels L,L... FILE... | --encode-cpu Q PNG...
//          (thumbd against other encoders at equal score; VersusBench, quality-bench.sh)
//        ThumbBench --levers FORMAT [--alpha FILE,FILE...] FILE...   (encoder levers at equal score; LeverBench)
// Driven by Tests/Benchmarks/codec-bench.sh; build with -c release.

var runs = 11
var variant = PreparedVariant(width: 256, height: 256, fit: .inside)
var format = OutputFormat.jpeg
var files: [String] = []
var blurBench = false
var qualityBench = false
var jpegQualities: [Int] = []
var animate = false
var jxlEfforts = false
var autoQuality = false
var autoSpread = false
var formatGiven = false
var target = AutoQuality.defaultTarget
var quality = 82
var output: String?
var levers: String?
var calibrate = false
var renditionsDirectory: String?
var versusDirectory: String?
var labels: [String] = []
var encodeCPUQuality: Int?
var alphaFiles: [String] = []
var args = CommandLine.arguments.dropFirst().makeIterator()
while let arg = args.next() {
    switch arg {
    case "--runs": runs = Int(args.next() ?? "") ?? runs
    case "--w": variant.width = Int(args.next() ?? "")
    case "--h": variant.height = Int(args.next() ?? "")
    case "--fit": variant.fit = .init(rawValue: args.next() ?? "") ?? .inside
    case "--gravity": variant.gravity = Gravity(rawValue: args.next() ?? "")
    case "--format": format = OutputFormat(rawValue: args.next() ?? "") ?? .jpeg; formatGiven = true
    case "--blur-bench": blurBench = true
    case "--ssimulacra2": qualityBench = true
    case "--jpeg": jpegQualities = (args.next() ?? "").split(separator: ",").compactMap { Int($0) }
    case "--animate": animate = true
    case "--jxl-efforts": jxlEfforts = true
    case "--auto-quality": autoQuality = true
    case "--auto-spread": autoSpread = true
    case "--target": target = Int(args.next() ?? "") ?? target
    case "--q": quality = Int(args.next() ?? "") ?? quality
    case "--out": output = args.next()
    case "--levers": levers = args.next()
    case "--calibrate": calibrate = true
    case "--renditions": renditionsDirectory = args.next()
    case "--versus": versusDirectory = args.next()
    case "--labels": labels = (args.next() ?? "").split(separator: ",").map(String.init)
    case "--encode-cpu": encodeCPUQuality = Int(args.next() ?? "")
    case "--alpha": alphaFiles = (args.next() ?? "").split(separator: ",").map(String.init)
    default: files.append(arg)
    }
}

if animate {
    AnimationBench.run(files: files, variant: variant, runs: runs, quality: quality, output: output)
    exit(0)
}

if let renditionsDirectory {
    VersusBench.renditions(directory: renditionsDirectory, files: files)
    exit(0)
}

if let versusDirectory {
    VersusBench.versus(directory: versusDirectory, labels: labels, files: files)
    exit(0)
}

if let encodeCPUQuality {
    VersusBench.encodeCPU(q: encodeCPUQuality, files: files)
    exit(0)
}

if calibrate {
    CalibrationBench.run(files: files, output: output)
    exit(0)
}

if let levers {
    LeverBench.run(format: levers, files: files, alphaFiles: alphaFiles)
    exit(0)
}

if autoQuality {
    AutoQualityBench.run(files: files, runs: runs, target: target)
    exit(0)
}

if autoSpread {
    AutoSpreadBench.run(files: files, target: target, formats: formatGiven ? [format] : [.jpeg, .webp, .avif, .jxl])
    exit(0)
}

if jxlEfforts {
    JXLEffortBench.run(files: files, runs: runs, quality: quality)
    exit(0)
}

if qualityBench {
    QualityBench.run(files: files, runs: runs, jpegQualities: jpegQualities, output: output)
    exit(0)
}

if blurBench {
    BlurBench.run(runs: max(runs, 15))
    exit(0)
}

func milliseconds(_ body: () throws -> Void) rethrows -> Double {
    try ContinuousClock().measure(body) / .milliseconds(1)
}

for file in files {
    guard let data = FileManager.default.contents(atPath: file) else {
        FileHandle.standardError.write(Data("cannot read \(file)\n".utf8))
        exit(1)
    }
    let source = [UInt8](data)
    var times: [Double] = []
    var outBytes = 0
    for _ in 0..<runs {
        times.append(try milliseconds {
            let bitmap = try ThumbnailPipeline.prepare(source: source, variant: variant, limits: PipelineLimits())
            outBytes = try ThumbnailPipeline.encode(bitmap, format: format, quality: 82).bytes.count
        })
    }
    times.sort()
    let name = (file as NSString).lastPathComponent
    print(String(format: "%@ %.2f %.2f %d", name, times[times.count / 2], times[0], outBytes))
}
