import Glibc
import ThumbJSON
import ThumbRender

/// The on-disk format of one original. One file holds the bytes and their
/// metadata, so a single `rename` publishes them together.
///
/// Written now (`THUMBD2`): the original's bytes, then the metadata as JSON,
/// its length (4 bytes, big-endian) and `THUMBD2\n`. The bytes come first so
/// that a download streams straight into the file that is later renamed into
/// the store (SourcesAndLimits.md § Downloads); the metadata, known only at the
/// end, is appended. Still read (`THUMBD1`, stores written before): `THUMBD1\n`,
/// the length, the JSON, then the bytes.
enum StoredFile {
    static let magic = Array("THUMBD2\n".utf8)
    static let firstMagic = Array("THUMBD1\n".utf8)
    static let headerLimit = 64 * 1024

    /// What follows an original's bytes in its file.
    static func trailer(for metadata: OriginalMetadata) -> [UInt8] {
        let json = Array(metadata.json.serialized().utf8)
        return json + bigEndian(UInt32(json.count)) + magic
    }

    /// Why a write failed: the `errno` of the call that failed.
    struct WriteError: Error {
        let code: Int32
        var description: String { String(cString: strerror(code)) }
        /// A failure that removing originals may cure: the file system is
        /// full, the quota spent, or the device failing (Configuration.md `diskStore`).
        var isForRoom: Bool { code == ENOSPC || code == EDQUOT || code == EIO }
    }

    /// Opens and checks a stored file: nil when it is missing, malformed, or
    /// its length does not match its metadata (never serve a partial
    /// original). Reads only the metadata; the bytes stay on disk behind the
    /// returned descriptor.
    static func open(_ path: String, expectedURL: String) -> (metadata: OriginalMetadata, file: OriginalFile)? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0,
              let (metadata, offset) = current(fd, size: Int(st.st_size)) ?? first(fd, size: Int(st.st_size)),
              metadata.url == expectedURL else {
            close(fd)
            return nil
        }
        return (metadata, OriginalFile(descriptor: fd, offset: offset, length: metadata.length))
    }

    /// A `THUMBD2` file's metadata and where its bytes start (0).
    private static func current(_ fd: Int32, size: Int) -> (OriginalMetadata, Int)? {
        guard size >= 4 + magic.count, let tail = readExactly(fd, count: 4 + magic.count, at: size - 4 - magic.count),
              Array(tail.suffix(magic.count)) == magic else { return nil }
        let n = Int(tail[0]) << 24 | Int(tail[1]) << 16 | Int(tail[2]) << 8 | Int(tail[3])
        guard n <= headerLimit, size >= n + tail.count, let json = readExactly(fd, count: n, at: size - tail.count - n),
              let metadata = parse(json), size == metadata.length + n + tail.count else { return nil }
        return (metadata, 0)
    }

    /// A `THUMBD1` file's metadata and where its bytes start.
    private static func first(_ fd: Int32, size: Int) -> (OriginalMetadata, Int)? {
        let headLength = firstMagic.count + 4
        guard size >= headLength, let head = readExactly(fd, count: headLength, at: 0),
              Array(head.prefix(firstMagic.count)) == firstMagic else { return nil }
        let n = Int(head[8]) << 24 | Int(head[9]) << 16 | Int(head[10]) << 8 | Int(head[11])
        guard n <= headerLimit, let json = readExactly(fd, count: n, at: headLength), let metadata = parse(json),
              size == headLength + n + metadata.length else { return nil }
        return (metadata, headLength + n)
    }

    private static func parse(_ json: [UInt8]) -> OriginalMetadata? {
        (try? JSONParser.parse(json)).flatMap(OriginalMetadata.init(json:))
    }

    private static func bigEndian(_ n: UInt32) -> [UInt8] {
        [UInt8(n >> 24), UInt8(n >> 16 & 255), UInt8(n >> 8 & 255), UInt8(n & 255)]
    }

    /// Writes every byte, retrying short writes and EINTR; false (errno set) on failure.
    static func writeAll(_ fd: Int32, _ bytes: some Collection<UInt8>) -> Bool {
        let done = bytes.withContiguousStorageIfAvailable { buffer in
            writeAll(fd, UnsafeRawBufferPointer(buffer))
        }
        return done ?? Array(bytes).withUnsafeBytes { writeAll(fd, $0) }
    }

    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Bool {
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

    /// Writes every byte at `offset` (the file position is not used),
    /// retrying short writes and EINTR; false (errno set) on failure. A failed
    /// write tried again writes the same bytes at the same place.
    static func writeAll(_ fd: Int32, _ bytes: some Collection<UInt8>, at offset: Int) -> Bool {
        let done = bytes.withContiguousStorageIfAvailable { buffer in
            writeAll(fd, UnsafeRawBufferPointer(buffer), at: offset)
        }
        return done ?? Array(bytes).withUnsafeBytes { writeAll(fd, $0, at: offset) }
    }

    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int) -> Bool {
        var done = 0
        while done < buffer.count {
            let n = pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            done += n
        }
        return true
    }

    private static func readExactly(_ fd: Int32, count: Int, at offset: Int) -> [UInt8]? {
        guard count > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: count)
        let ok = out.withUnsafeMutableBytes { buffer in
            var done = 0
            while done < count {
                let n = pread(fd, buffer.baseAddress! + done, count - done, off_t(offset + done))
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                done += n
            }
            return true
        }
        return ok ? out : nil
    }
}
