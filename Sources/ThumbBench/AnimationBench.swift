import Foundation
import ThumbCodec
import ThumbImaging
import ThumbRender

/// `--animate`: an animated GIF or WebP rendered to an animated WebP
/// (`ThumbnailPipeline.renderAnimation`), in memory, repeated. One line per
/// file: "<name> <median ms> <min ms> <median CPU ms> <min CPU ms> <bytes>
/// <frames> <peak MiB> <estimate MiB> <encoder MiB>": CPU time of the
/// thread; the peak is the process's resident peak during the second render
/// minus its resident size just before (the kernel's high-water mark, reset
/// through /proc/self/clear_refs, after malloc_trim: the first render of a
/// process also maps the libraries' code and fills lookup tables, as a
/// worker's first job does once); the estimate is
/// `RenderPlan.estimatedAnimationMemory`; the encoder figure is the peak of
/// the encoder alone on the same frames, measured the same way in a separate run.
/// With `--out FILE` the last result is written there.
enum AnimationBench {
    static func run(files: [String], variant: PreparedVariant, runs: Int, quality: Int, output: String?) {
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                FileHandle.standardError.write(Data("cannot read \(file)\n".utf8))
                exit(1)
            }
            let source = [UInt8](data)
            let limits = PipelineLimits()
            do throws(RenderError) {
                let plan = try ThumbnailPipeline.plan(source: source, variant: variant, limits: limits)
                var times: [Double] = [], cpu: [Double] = []
                var result: AnimatedRendition?
                var peak = 0
                // The peak is the second render's: the first maps the libraries'
                // code and fills the lookup tables, once per process.
                let measured = min(1, runs - 1)
                for run in 0..<runs {
                    if run == measured { trimHeap() }
                    let before = resident()
                    if run == measured { resetPeak() }
                    let cpuStart = threadCPUMilliseconds()
                    let start = ContinuousClock.now
                    result = try ThumbnailPipeline.renderAnimation(source: source, plan: plan, quality: quality, limits: limits)
                    times.append((ContinuousClock.now - start) / .milliseconds(1))
                    cpu.append(threadCPUMilliseconds() - cpuStart)
                    if run == measured { peak = peakResident() - before }
                }
                times.sort()
                cpu.sort()
                guard let result else { return }
                if let output { FileManager.default.createFile(atPath: output, contents: Data(result.encoded.bytes)) }
                let mib = { (bytes: Int) in Double(bytes) / 1_048_576 }
                print(String(format: "%@ %.1f %.1f %.1f %.1f %d %d %.2f %.2f %.2f", (file as NSString).lastPathComponent,
                             times[runs / 2], times[0], cpu[runs / 2], cpu[0], result.encoded.bytes.count, result.frames,
                             mib(peak), mib(plan.estimatedAnimationMemory(limits: limits)),
                             mib(encoderHeld(source: source, plan: plan, quality: quality, limits: limits))))
            } catch {
                FileHandle.standardError.write(Data("\(file): \(error.message)\n".utf8))
                exit(1)
            }
        }
    }

    /// The encoder alone, fed the frames a render makes (made first, then
    /// the peak reset): the resident peak while it adds them and assembles
    /// the file, above the resident size before it started.
    private static func encoderHeld(source: [UInt8], plan: RenderPlan, quality: Int, limits: PipelineLimits) -> Int {
        var frames: [(Bitmap, Int)] = []
        do throws(CodecError) {
            try AnimationDecoder.decode(source, header: plan.header, maxFrames: plan.animationFrames(limits: limits)) { frame in
                var renderer = ThumbnailRenderer(geometry: plan.geometry, orientation: plan.header.orientation)
                frame.feed(into: &renderer)
                frames.append((renderer.finish(), frame.durationMilliseconds))
            }
            trimHeap()
            let before = resident()
            resetPeak()
            let encoder = try AnimatedWebPEncoder(width: plan.geometry.width, height: plan.geometry.height,
                                                  quality: quality, loopCount: 0)
            for (bitmap, duration) in frames { try encoder.add(bitmap, durationMilliseconds: duration) }
            let bytes = try encoder.finish()
            precondition(!bytes.isEmpty)
            return peakResident() - before
        } catch {
            return -1
        }
    }

    /// glibc's malloc_trim(0): freed heap pages go back to the system, so
    /// that the resident size measures what is held (not in Swift's Glibc module).
    static func trimHeap() {
        typealias Trim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(nil, "malloc_trim") else { return }  // RTLD_DEFAULT
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
    }

    private static func status(_ key: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }) else { return 0 }
        return (Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) * 1024
    }

    static func resident() -> Int { status("VmRSS") }
    static func peakResident() -> Int { status("VmHWM") }

    /// Resets VmHWM to the current resident size (Linux ≥ 4.0).
    static func resetPeak() {
        guard let file = fopen("/proc/self/clear_refs", "w") else { return }
        fputs("5", file)
        fclose(file)
    }

    private static func threadCPUMilliseconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1_000_000
    }
}
