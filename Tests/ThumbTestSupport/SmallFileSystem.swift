import Foundation
import Glibc

/// A real, small file system for the tests of a disk store that cannot
/// write (Configuration.md `diskStore`): a tmpfs of a few MiB mounted on a
/// fresh directory, which a test fills (`fill()`: every byte;
/// `useUpInodes()`: every inode) or remounts read-only, so the store meets the kernel's own
/// `ENOSPC` and `EROFS`, not a stand-in.
///
/// Mounting needs root (CAP_SYS_ADMIN). The tests run as root here and in
/// CI, so without it `init` throws `Refused`, which fails the test with the
/// reason (Testing.md § A full disk store): a skipped check would look green.
/// `unmount()` (lazy: open files do not keep it) and removing the directory
/// belong in a `defer` right after `init`.
public final class SmallFileSystem: @unchecked Sendable {
    /// Why the tmpfs could not be mounted.
    public struct Refused: Error, CustomStringConvertible {
        public let description: String
    }

    /// The mount point.
    public let path: String
    private var mounted = true
    private var fillers = 0

    /// Mounts a tmpfs of `bytes` (and at most `inodes` files and directories,
    /// when given) on a new directory under the system's temporary directory.
    public init(bytes: Int, inodes: Int? = nil) throws {
        path = NSTemporaryDirectory() + "thumbd-small-fs-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let options = "size=\(bytes)" + (inodes.map { ",nr_inodes=\($0)" } ?? "")
        guard mount("tmpfs", path, "tmpfs", 0, options) == 0 else {
            let code = errno
            rmdir(path)
            let why = String(cString: strerror(code))
            throw Refused(description: "cannot mount a tmpfs on \(path) (\(why)): the full-store tests need root "
                          + "(they run as root in CI; run them as root, see Testing.md)")
        }
    }

    deinit { unmount() }

    /// Fills the bytes left: a file `filler-N` in `directory` (default:
    /// the mount point) written until `ENOSPC`. New (empty) files can still
    /// be made while inodes are left. Returns the bytes written.
    @discardableResult
    public func fill(in directory: String? = nil) throws -> Int {
        guard let fd = try newFiller(in: directory ?? path) else { return 0 }
        defer { close(fd) }
        var written = 0
        let chunk = [UInt8](repeating: 0x5a, count: 4096)
        while true {
            let n = chunk.withUnsafeBytes { Glibc.write(fd, $0.baseAddress!, $0.count) }
            if n > 0 { written += n; continue }
            if n < 0 && errno == EINTR { continue }
            guard errno == ENOSPC else { throw Refused(description: "filler: \(String(cString: strerror(errno)))") }
            return written
        }
    }

    /// Uses up the inodes left (mounted with `inodes`) with empty files:
    /// then no file or directory can be made.
    public func useUpInodes(in directory: String? = nil) throws {
        while let fd = try newFiller(in: directory ?? path) { close(fd) }
    }

    /// A new filler file open for writing; nil when no inode is left.
    private func newFiller(in dir: String) throws -> Int32? {
        fillers += 1
        let fd = open("\(dir)/filler-\(fillers)", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            guard errno == ENOSPC else { throw Refused(description: "filler: \(String(cString: strerror(errno)))") }
            return nil
        }
        return fd
    }

    /// Bytes free on the file system now.
    public var freeBytes: Int {
        var s = statvfs()
        guard statvfs(path, &s) == 0 else { return -1 }
        return Int(s.f_bavail) * Int(s.f_frsize)
    }

    /// Remounts read-only (or writable again): writes then fail with `EROFS`.
    public func remount(readOnly: Bool) throws {
        let flags = UInt(MS_REMOUNT) | (readOnly ? UInt(MS_RDONLY) : 0)
        guard mount("tmpfs", path, "tmpfs", flags, nil) == 0 else {
            throw Refused(description: "remount of \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Detaches the mount (lazily: a descriptor still open on it does not
    /// keep it) and removes the mount point. Idempotent.
    public func unmount() {
        guard mounted else { return }
        mounted = false
        umount2(path, Int32(MNT_DETACH))
        rmdir(path)
    }

    /// Whether `path` is a mount point (its device is not its parent's):
    /// what a test checks to see that nothing is left mounted.
    public static func isMounted(_ path: String) -> Bool {
        var inner = stat(), outer = stat()
        return stat(path, &inner) == 0 && stat(path + "/..", &outer) == 0 && inner.st_dev != outer.st_dev
    }
}
