import Foundation
import ThumbImaging

/// `--blur-bench`: `GaussianBlur` and `UnsharpMask` alone on a 1024×1024
/// premultiplied linear image (random colours, alpha 0.5…1), one thread;
/// one line per case: "<case> <median ms> <min ms> <median CPU ms> <min CPU ms>", the last
/// the thread's CPU time, which a busy shared machine inflates less than the
/// wall clock. The copy of the input each run starts from is not timed.
/// Issue 20's budget: blur σ 20 ≤ 15 ms.
enum BlurBench {
    static func run(runs: Int) {
        let side = 1024
        var random = SystemRandomNumberGenerator()
        let input = (0..<(side * side)).map { _ -> SIMD4<Float> in
            let a = Float.random(in: 0.5...1, using: &random)
            return SIMD4(Float.random(in: 0...a, using: &random), Float.random(in: 0...a, using: &random),
                         Float.random(in: 0...a, using: &random), a)
        }
        let cases: [(String, Float, Bool)] = [("blur 0.5", 0.5, false), ("blur 2", 2, false), ("blur 20", 20, false),
                                              ("blur 100", 100, false), ("blur 400", 400, false),
                                              ("sharpen 1", 1, true), ("sharpen 40", 40, true)]
        for (name, sigma, sharpen) in cases {
            var times: [Double] = [], cpuTimes: [Double] = []
            for _ in 0..<runs {
                var pixels = input
                pixels[0] = input[0] // the copy-on-write copy, here rather than in the timed call
                let cpuStart = threadCPUMilliseconds()
                let elapsed = ContinuousClock().measure {
                    if sharpen {
                        UnsharpMask.apply(&pixels, width: side, height: side, sigma: sigma)
                    } else {
                        GaussianBlur.apply(&pixels, width: side, height: side, sigma: sigma)
                    }
                }
                cpuTimes.append(threadCPUMilliseconds() - cpuStart)
                times.append(elapsed / .milliseconds(1))
                precondition(pixels[side * side / 2].w > 0) // keeps the work observable
            }
            times.sort()
            cpuTimes.sort()
            print(String(format: "%@ %.2f %.2f %.2f %.2f", name, times[runs / 2], times[0], cpuTimes[runs / 2], cpuTimes[0]))
        }
    }

    private static func threadCPUMilliseconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1_000_000
    }
}
