import Foundation
import Glibc
import ThumbFetch

/// A download's body on its way to disk (SourcesAndLimits.md § Downloads): a
/// `BodySink` that appends each piece the fetcher hands over to a temporary
/// file and hashes it as it goes. Nothing of the body stays in memory, and
/// keeping it is a `rename` into the disk store (`DiskStore.keep`), not a copy.
///
/// The file is made at the first write (or at `finish` for an empty body), so
/// a download waiting for a transfer slot, a `304` or a failure before the
/// body holds no descriptor and leaves nothing. It goes into the disk store's
/// `tmp` directory, where a crash's leftovers are removed at the next start
/// and from where it can be renamed into place. When the store cannot be
/// written there (a full or broken store, which `storeFailed` reports), or
/// there is no store, it goes to `scratch` instead and is unlinked at once:
/// served, never kept, never left behind.
///
/// Unless kept, the file is removed when the download is dropped — after a
/// cut, failed or too-large download, or once its original was read from the
/// returned `OriginalFile`, whose descriptor keeps the bytes readable.
///
/// Threads: `write` runs on the fetcher's engine thread; `finish`, `keep`
/// and deinit run after the fetch's completion, which follows the last write,
/// on one thread at a time. Hence `@unchecked Sendable`.
final class DownloadFile: BodySink, @unchecked Sendable {
    private struct Opened {
        let writer: Int32
        /// Read-only, handed to the `OriginalFile` by `finish`.
        var reader: Int32?
        /// The name in the store's `tmp` while it has one (nil in `scratch`, or once kept).
        var path: String?
    }

    private let storeTemp: String?
    private let scratch: String?
    private let storeFailed: @Sendable (StoredFile.WriteError) -> Void
    private var opened: Opened?
    private let digest = SHA256Stream()
    /// Bytes written.
    private(set) var length = 0

    /// `storeTemp`: the disk store's `tmp` directory (nil without a store);
    /// `scratch`: where to go when that cannot be written (nil: fail instead).
    init(storeTemp: String?, scratch: String?,
         storeFailed: @escaping @Sendable (StoredFile.WriteError) -> Void = { _ in }) {
        self.storeTemp = storeTemp
        self.scratch = scratch
        self.storeFailed = storeFailed
    }

    deinit { discard() }

    func write(_ bytes: UnsafeRawBufferPointer) throws(BodySinkError) {
        let file = try open()
        guard StoredFile.writeAll(file.writer, bytes) else {
            let error = StoredFile.WriteError(code: errno)
            if file.path != nil { storeFailed(error) }
            throw BodySinkError("writing the download failed: \(error.description)")
        }
        digest.update(bytes)
        length += bytes.count
    }

    /// After the whole body arrived: the original, readable through its own
    /// descriptor whatever becomes of the file, and its hex SHA-256.
    func finish() throws(ServiceError) -> (file: OriginalFile, sha256: String) {
        let reader: Int32
        do throws(BodySinkError) {
            guard let taken = try open().reader else { throw BodySinkError("the download was finished twice") }
            reader = taken
        } catch {
            throw .internalError(error.message)
        }
        opened?.reader = nil
        return (OriginalFile(descriptor: reader, offset: 0, length: length), Digest.hex(digest.finish()))
    }

    /// Removes the file unless it was kept, and closes what `finish` did not
    /// hand over: called once the download's fate is known, before anyone
    /// hears of it, so no answer ever comes while a temporary file is left.
    /// Deinit does the same for a download dropped without it.
    func discard() {
        guard let file = opened else { return }
        opened = nil
        close(file.writer)
        if let reader = file.reader { close(reader) }
        if let path = file.path { unlink(path) }
    }

    /// For `DiskStore.keep`: the file's name in `directory`'s `tmp`, if it has one there.
    func temporaryPath(inStore directory: String) -> String? {
        guard let path = opened?.path, path.hasPrefix(directory + "/tmp/") else { return nil }
        return path
    }

    /// For `DiskStore.keep`: appends the metadata after the bytes and flushes
    /// the file to disk, so the rename that follows publishes a whole original.
    func seal(with trailer: [UInt8]) -> Result<Void, StoredFile.WriteError> {
        guard let writer = opened?.writer else { return .failure(StoredFile.WriteError(code: EBADF)) }
        guard StoredFile.writeAll(writer, trailer), fsync(writer) == 0 else {
            return .failure(StoredFile.WriteError(code: errno))
        }
        return .success(())
    }

    /// For `DiskStore.keep`: the file was renamed into the store; it is no
    /// longer this download's to remove.
    func kept() { opened?.path = nil }

    private func open() throws(BodySinkError) -> Opened {
        if let opened { return opened }
        var failure: StoredFile.WriteError?
        if let storeTemp {
            switch Self.make(in: storeTemp, keepName: true) {
            case .success(let made): opened = made
            case .failure(let error) where error.code == ENOENT:
                // The store's directories were removed under us: make them again, once.
                try? FileManager.default.createDirectory(atPath: storeTemp, withIntermediateDirectories: true)
                switch Self.make(in: storeTemp, keepName: true) {
                case .success(let made): opened = made
                case .failure(let error): failure = error
                }
            case .failure(let error): failure = error
            }
            if let failure { storeFailed(failure) }
        }
        if opened == nil, let scratch {
            switch Self.make(in: scratch, keepName: false) {
            case .success(let made): opened = made
            case .failure(let error): failure = error
            }
        }
        guard let opened else {
            throw BodySinkError("cannot make a file for the download: \(failure?.description ?? "no directory")")
        }
        return opened
    }

    /// A new file in `directory`, open for writing and for reading; unlinked
    /// at once unless `keepName`.
    private static func make(in directory: String, keepName: Bool) -> Result<Opened, StoredFile.WriteError> {
        let path = "\(directory)/\(keepName ? "" : "thumbd-download-")\(String(UInt64.random(in: 0...UInt64.max), radix: 16)).part"
        let writer = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard writer >= 0 else { return .failure(StoredFile.WriteError(code: errno)) }
        let reader = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else {
            let code = errno
            close(writer)
            unlink(path)
            return .failure(StoredFile.WriteError(code: code))
        }
        if !keepName { unlink(path) }
        return .success(Opened(writer: writer, reader: reader, path: keepName ? path : nil))
    }
}
