import ThumbJSON
import Glibc

/// The on-disk format of one original: `THUMBD1\n`, a 4-byte big-endian
/// metadata length, the metadata as JSON, then the original's bytes. One file
/// holds both so a single `rename` publishes them together.
enum StoredFile {
    static let magic = Array("THUMBD1\n".utf8)
    static let headerLimit = 64 * 1024

    static func encode(_ metadata: OriginalMetadata) -> [UInt8] {
        let json = Array(metadata.json.serialized().utf8)
        let n = UInt32(json.count)
        return magic + [UInt8(n >> 24), UInt8(n >> 16 & 255), UInt8(n >> 8 & 255), UInt8(n & 255)] + json
    }

    /// Writes `data` with its metadata to `temp`, fsyncs, then renames it to
    /// `final`: a crash at any moment leaves either no file or a whole one.
    /// Returns the bytes written.
    /// Why a write failed: the `errno` of the call that failed.
    struct WriteError: Error {
        let code: Int32
        var description: String { String(cString: strerror(code)) }
    }

    /// Writes to `temp`, then renames onto `final`: a reader sees the whole
    /// file or none, and a failure (a full disk) leaves nothing behind.
    static func write(data: [UInt8], metadata: OriginalMetadata, temp: String, final: String) -> Result<Int, WriteError> {
        let header = encode(metadata)
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return .failure(WriteError(code: errno)) }
        let ok = writeAll(fd, header) && writeAll(fd, data) && fsync(fd) == 0
        var code = errno
        close(fd)
        if ok {
            if rename(temp, final) == 0 { return .success(header.count + data.count) }
            code = errno
        }
        unlink(temp)
        return .failure(WriteError(code: code))
    }

    /// Reads and checks a stored file: nil when it is missing, malformed, or
    /// its length does not match its metadata (never serve a partial original).
    static func read(_ path: String, expectedURL: String) -> (metadata: OriginalMetadata, data: [UInt8])? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        let size = Int(st.st_size)
        guard size >= magic.count + 4 else { return nil }
        guard let head = readExactly(fd, count: magic.count + 4), Array(head.prefix(magic.count)) == magic else {
            return nil
        }
        let n = Int(head[8]) << 24 | Int(head[9]) << 16 | Int(head[10]) << 8 | Int(head[11])
        guard n <= headerLimit, let jsonBytes = readExactly(fd, count: n),
              let json = try? JSONParser.parse(jsonBytes), let metadata = OriginalMetadata(json: json),
              metadata.url == expectedURL, size == magic.count + 4 + n + metadata.length,
              let data = readExactly(fd, count: metadata.length) else { return nil }
        return (metadata, data)
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += n
            }
            return true
        }
    }

    private static func readExactly(_ fd: Int32, count: Int) -> [UInt8]? {
        guard count > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: count)
        let ok = out.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < count {
                let n = Glibc.read(fd, buffer.baseAddress! + offset, count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
        return ok ? out : nil
    }
}
