import CThumbSandbox
import Glibc

/// Content that crosses the channel as a descriptor instead of frame bytes:
/// an original handed to a worker, a worker's encoded result. Readers bound
/// what they read by the size found, never by what the sender says.
public enum SharedMemory {
    /// A new sealed memfd holding `bytes`: its holders (the worker that made it
    /// included) can no longer change or resize it. `name` shows in
    /// /proc/<pid>/fd only.
    public static func sealed(name: String, bytes: UnsafeRawBufferPointer) throws(SandboxError) -> OwnedFileDescriptor {
        let created = thumbd_memfd(name)
        guard created >= 0 else { throw .system("memfd_create", -created) }
        let memory = OwnedFileDescriptor(taking: created)
        // Sized first: one tmpfs size change instead of one per write.
        guard ftruncate(created, off_t(bytes.count)) == 0 else { throw .system("ftruncate", errno) }
        var written = 0
        while written < bytes.count {   // each pass writes at least one byte or throws
            let count = pwrite(created, bytes.baseAddress! + written, bytes.count - written, off_t(written))
            if count < 0 {
                if errno == EINTR { continue }
                throw .system("pwrite", errno)
            }
            guard count > 0 else { throw .system("pwrite", EIO) }
            written += count
        }
        let sealedResult = thumbd_seal(created)
        guard sealedResult == 0 else { throw .system("fcntl(F_ADD_SEALS)", -sealedResult) }
        return memory
    }

    /// `sealed(name:bytes:)` for an array.
    public static func sealed(name: String, bytes: [UInt8]) throws(SandboxError) -> OwnedFileDescriptor {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(SandboxError) in try sealed(name: name, bytes: raw) }
        }
        return try result.get()
    }

    /// The whole content of a received memfd that must be sealed (a worker's
    /// result: its size cannot change while it is read), at most `maxBytes`.
    /// Throws `.notSealed`, `.tooLarge`, or `.system`. Does not close `fd`.
    public static func readSealed(_ fd: Int32, maxBytes: Int) throws(SandboxError) -> [UInt8] {
        guard thumbd_is_sealed(fd) == 1 else { throw .notSealed }
        return try readFile(fd, maxBytes: maxBytes)
    }

    /// The whole content of a regular file or memfd (a stored original passed
    /// read-only), at most `maxBytes`: the size is fstat's, checked against
    /// the bound before anything is allocated. A file that shrinks while read
    /// gives `.system("pread", EIO)`; growth after the fstat is not read.
    /// Does not close `fd`.
    public static func readFile(_ fd: Int32, maxBytes: Int) throws(SandboxError) -> [UInt8] {
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .system("fstat", errno) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .system("fstat: not a regular file", EINVAL) }
        let size = Int(status.st_size)
        guard size <= maxBytes else { throw .tooLarge(size, limit: maxBytes) }
        // An empty file is the empty array: `Array(unsafeUninitializedCapacity: 0)` writes its count
        // into Swift's one shared empty-array storage, which ThreadSanitizer reports as a race with
        // every other thread reading an empty array (found by a CI run).
        if size == 0 { return [] }
        var failure: SandboxError?
        // Uninitialized: every byte is read into it, or it is thrown away.
        let content = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var done = 0
            while done < size {   // each pass reads at least one byte or stops
                let count = pread(fd, buffer.baseAddress! + done, size - done, off_t(done))
                if count < 0 {
                    if errno == EINTR { continue }
                    failure = .system("pread", errno)
                    break
                }
                if count == 0 {   // shrank under us
                    failure = .system("pread", EIO)
                    break
                }
                done += count
            }
            initialized = failure == nil ? size : 0
        }
        if let failure { throw failure }
        return content
    }
}
