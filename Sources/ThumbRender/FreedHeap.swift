import CThumbSys
#if canImport(Glibc)
import Glibc
#endif

/// Gives the heap's free pages back to the kernel once work has paused: the
/// render queue when it has been idle a second, a render worker after a second
/// without a job (Isolation.md). While busy, both keep them for the next job.
public enum FreedHeap {
    /// glibc's `malloc_trim(0)`, found at run time: Swift's Glibc module leaves
    /// out `<malloc.h>`, and other C libraries have no such call (then a no-op).
    public static let release: @Sendable () -> Void = {
        typealias Trim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(nil, "malloc_trim") else { return {} }
        let trim = unsafeBitCast(symbol, to: Trim.self)
        return { _ = trim(0) }
    }()

    /// `release()` when the heap holds more than `bytes` free: a render
    /// worker before each job, so that what it kept from the last one stays
    /// within what its daemon counts for it (Isolation.md § Memory).
    public static func release(keeping bytes: Int) {
        if thumbd_heap_free_bytes() > bytes { release() }
    }
}
