import Glibc
import ThumbFetch

/// Secrets read from files named in the configuration (`s3.secretAccessKeyFile`,
/// `diskStore.shared.keyFile`): read at start and on every reload, never quoted.
enum KeyFile {
    /// Bytes a key file may have: a key is tens of bytes, and a path to
    /// `/dev/zero` or a pipe must not hang start-up (or the config fuzzer).
    static let maxBytes = 65536

    /// The file's bytes; nil unless it is a readable regular file of at most
    /// `maxBytes`. Read with open/fstat/read on one descriptor: what is
    /// checked is what is read (no path looked up twice), and nothing reads
    /// past the bound. The caller zeroes what it no longer needs.
    static func read(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= maxBytes else { return nil }
        var bytes = [UInt8](repeating: 0, count: maxBytes + 1)
        var length = 0
        while length < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + length, $0.count - length) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { return nil }
            if n == 0 { break }
            length += n
        }
        guard length <= maxBytes else { return nil }
        defer { bytes.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        return Array(bytes[..<length])
    }

    /// `diskStore.shared.keyFile` (SeveralInstances.md): one key per line, its
    /// bytes as written (a final newline ends the last line), at least
    /// `SharedStoreKey.minBytes` each, one or two of them (the first signs;
    /// the second still passes while a new key is rolled out).
    static func sharedStoreKeys(_ path: String) throws(ConfigurationError) -> [SharedStoreKey] {
        let key = "diskStore.shared.keyFile"
        guard var bytes = read(path) else {
            throw ConfigurationError(key: key, "'\(path)' is not a readable regular file of at most \(maxBytes) bytes")
        }
        defer { bytes.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        guard !lines.isEmpty else { throw ConfigurationError(key: key, "'\(path)' holds no key") }
        guard lines.count <= 2 else {
            throw ConfigurationError(key: key, "'\(path)' holds \(lines.count) lines: at most two keys, the one that signs first")
        }
        for (n, line) in lines.enumerated() where line.count < SharedStoreKey.minBytes {
            throw ConfigurationError(key: key, "line \(n + 1) of '\(path)' is \(line.count) bytes: a key is at least \(SharedStoreKey.minBytes)")
        }
        return lines.map { SharedStoreKey(Array($0)) }
    }
}
