import Glibc

/// CPU seconds the calling thread spends in `body`: what a decoder's work
/// costs, unlike wall time, which grows with whatever else the machine runs
/// (tests run in parallel, CI runs beside other jobs).
func threadCPUSeconds<T>(_ body: () throws -> T) rethrows -> (T, Double) {
    func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
    let start = now()
    let result = try body()
    return (result, now() - start)
}
