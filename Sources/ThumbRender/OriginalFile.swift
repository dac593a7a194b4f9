import Glibc

/// An original's bytes in a file, held by an open read-only descriptor until
/// the last reference goes: a job waiting in the render queue keeps one of
/// these instead of the bytes, so originals waiting to be decoded cost no
/// memory (SourcesAndLimits.md § Downloads). The descriptor keeps the bytes
/// readable even when the file is renamed, evicted from the disk store,
/// purged or was never kept: an unlinked file lives as long as it is open.
public final class OriginalFile: Sendable {
    /// Read-only; closed in deinit.
    private let descriptor: Int32
    /// Where the original's bytes start (a stored file may begin with its metadata).
    private let offset: Int
    /// Bytes of the original.
    public let length: Int
    /// What must live as long as the bytes: the memory held for an original
    /// kept in memory (`RenderQueue.hold`), given back when this goes.
    private let keeper: (any AnyObject & Sendable)?

    /// Takes ownership of `descriptor` (the stores make these).
    package init(descriptor: Int32, offset: Int, length: Int, keeping keeper: (any AnyObject & Sendable)? = nil) {
        self.descriptor = descriptor
        self.offset = offset
        self.length = length
        self.keeper = keeper
    }

    /// An original whose descriptor arrived from elsewhere: a worker's job
    /// (Isolation.md) reads the daemon's stored file through it.
    public convenience init(adopting descriptor: Int32, offset: Int, length: Int) {
        self.init(descriptor: descriptor, offset: offset, length: length)
    }

    deinit { close(descriptor) }

    /// The read-only descriptor and where the original starts in it, to pass
    /// to a worker process; valid while this object lives.
    public var span: (descriptor: Int32, offset: Int) { (descriptor, offset) }

    /// Reads the whole original into memory: on the render worker, when its
    /// job starts, so the bytes count in that job's memory admission.
    public func read() throws(RenderError) -> [UInt8] {
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: length) { buffer, initialized in
            initialized = 0
            while initialized < length {
                let n = pread(descriptor, buffer.baseAddress! + initialized, length - initialized,
                              off_t(offset + initialized))
                if n < 0 && errno == EINTR { continue }
                if n <= 0 {
                    failure = n < 0 ? errno : EIO   // 0: the file is shorter than recorded
                    break
                }
                initialized += n
            }
        }
        guard failure == 0 else {
            throw .internalError("reading an original of \(length) bytes failed: \(String(cString: strerror(failure)))")
        }
        return bytes
    }
}
