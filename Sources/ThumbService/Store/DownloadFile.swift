import CThumbSys
import Foundation
import Glibc
import ThumbFetch
import ThumbRender

/// A download's body on its way to disk (SourcesAndLimits.md § Downloads): a
/// `BodySink` that appends each piece the fetcher hands over to a temporary
/// file and hashes it as it goes. Nothing of the body stays in memory, and
/// keeping it is a `rename` into the disk store (`DiskStore.keep`), not a copy.
///
/// The file is made at the first write (or at `finish` for an empty body), so
/// a download waiting for a transfer slot, a `304` or a failure before the
/// body holds no descriptor and leaves nothing. It goes into the disk store's
/// `tmp` directory, where a crash's leftovers are removed at the next start
/// and from where it can be renamed into place.
///
/// A store that cannot be written never fails the download (Configuration.md
/// `diskStore`): when a write there fails for room (`ENOSPC`, `EDQUOT`,
/// `EIO`), the store removes its least recently used original and the write
/// is tried again, until it fits or nothing is left to remove; then, or at
/// once for any other failure (a read-only file system), the bytes so far are
/// copied to a file in `scratch`, unlinked at once, and the download goes on
/// there: served, never kept, never left behind. Without a store it starts
/// in `scratch`. A download that cannot be written there either fails
/// (`foundNoPlace`), and `OriginLoader` starts it again in memory (a memfd),
/// once `RenderQueue.hold` granted the memory it may need.
///
/// Unless kept, the file is removed when the download is dropped — after a
/// cut, failed or too-large download, or once its original was read from the
/// returned `OriginalFile`, whose descriptor keeps the bytes readable.
///
/// Threads: `write` runs on the fetcher's engine thread; `finish`, `keep`
/// and deinit run after the fetch's completion, which follows the last write,
/// on one thread at a time. Hence `@unchecked Sendable`.
final class DownloadFile: BodySink, @unchecked Sendable {
    /// What a download needs of the disk store it is written into.
    struct Store: Sendable {
        /// The store's `tmp` directory.
        let temp: String
        /// Removes the store's least recently used original after a write
        /// failed for room; false when nothing could be removed.
        let makeRoom: @Sendable () -> Bool
        /// Told when the download gives up on the store (logged once per outage).
        let failed: @Sendable (StoredFile.WriteError) -> Void
    }

    private struct Opened {
        let writer: Int32
        /// Read-only, handed to the `OriginalFile` by `finish`.
        var reader: Int32?
        /// The name in the store's `tmp` while it has one (nil in `scratch`, or once kept).
        var path: String?
    }

    private let store: Store?
    private let scratch: String?
    /// For a download in memory: the most it may hold, and the memory held for it.
    private let memory: (limit: Int, hold: MemoryHold)?
    private var opened: Opened?
    private let digest = SHA256Stream()
    /// Bytes written.
    private(set) var length = 0
    /// Why the store could not hold this download, once it gave up on it:
    /// then it is not kept (Statistics.md `diskStore.writeFailures`).
    private(set) var storeFailure: StoredFile.WriteError?
    /// The download failed because no file could hold it, on disk or in the
    /// temporary directory: it may start again in memory.
    private(set) var foundNoPlace = false
    /// A download in memory outgrew the memory held for it.
    private(set) var overflowed = false

    /// `store`: the disk store to write into (nil without one); `scratch`:
    /// where to go when that cannot be written (nil: fail instead).
    init(store: Store?, scratch: String?) {
        self.store = store
        self.scratch = scratch
        memory = nil
    }

    /// A download in memory, at most `limit` bytes, counted by `hold`
    /// (which the original keeps until its bytes go); `storeFailure`: why
    /// the disk store could not take it, when it was tried first.
    init(inMemory limit: Int, hold: MemoryHold, storeFailure: StoredFile.WriteError?) {
        store = nil
        scratch = nil
        memory = (limit, hold)
        self.storeFailure = storeFailure
    }

    deinit { discard() }

    func write(_ bytes: UnsafeRawBufferPointer) throws(BodySinkError) {
        if let memory, length + bytes.count > memory.limit {
            overflowed = true
            throw BodySinkError("the original is over the \(memory.limit) bytes of memory held for it")
        }
        do throws(BodySinkError) {
            var file = try open()
            while !StoredFile.writeAll(file.writer, bytes, at: length) {
                file = try moveOn(from: file, after: StoredFile.WriteError(code: errno))
            }
        } catch {
            foundNoPlace = memory == nil
            throw error
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
        return (OriginalFile(descriptor: reader, offset: 0, length: length, keeping: memory?.hold),
                Digest.hex(digest.finish()))
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

    /// For `DiskStore.keep`: the file's name in the store's `tmp`, if it has one there.
    var temporaryPath: String? { opened?.path }

    /// For `DiskStore.keep`: appends the metadata after the bytes and flushes
    /// the file to disk, so the rename that follows publishes a whole original.
    /// A write that fails for room is tried again after the store made some.
    func seal(with trailer: [UInt8]) -> Result<Void, StoredFile.WriteError> {
        guard let writer = opened?.writer else { return .failure(StoredFile.WriteError(code: EBADF)) }
        while !StoredFile.writeAll(writer, trailer, at: length) {
            let error = StoredFile.WriteError(code: errno)
            guard error.isForRoom, store?.makeRoom() == true else { return .failure(error) }
        }
        // A failed fsync is not tried again: the kernel may have dropped the
        // pages it could not write, and a second fsync would not say so.
        guard fsync(writer) == 0 else { return .failure(StoredFile.WriteError(code: errno)) }
        return .success(())
    }

    /// For `DiskStore.keep`: the file was renamed into the store; it is no
    /// longer this download's to remove.
    func kept() { opened?.path = nil }

    /// For `DiskStore.keep`: the store could not take the finished file.
    func notKept(_ error: StoredFile.WriteError) {
        if storeFailure == nil { storeFailure = error }
    }

    private func open() throws(BodySinkError) -> Opened {
        if let opened { return opened }
        if memory != nil {
            switch Self.makeInMemory() {
            case .success(let made): opened = made
            case .failure(let error): throw BodySinkError("cannot make a file in memory for the download: \(error.description)")
            }
            return opened!
        }
        var failure: StoredFile.WriteError?
        if let store {
            switch Self.make(in: store) {
            case .success(let made): opened = made
            case .failure(let error):
                failure = error
                giveUpOnStore(error)
            }
        }
        if opened == nil, let scratch {
            switch Self.make(in: scratch, inStore: false) {
            case .success(let made): opened = made
            case .failure(let error): failure = error
            }
        }
        guard let opened else {
            throw BodySinkError("cannot make a file for the download: \(failure?.description ?? "no directory")")
        }
        return opened
    }

    /// After a write into `file` failed with `error`: the same file once the
    /// store made room for it, else a new file in `scratch` that holds the
    /// bytes written so far, where the download goes on.
    private func moveOn(from file: Opened, after error: StoredFile.WriteError) throws(BodySinkError) -> Opened {
        guard file.path != nil, let store else {
            throw BodySinkError("writing the download failed: \(error.description)")
        }
        if error.isForRoom && store.makeRoom() { return file }
        giveUpOnStore(error)
        guard let scratch, let reader = file.reader else {
            throw BodySinkError("writing the download failed: \(error.description)")
        }
        let next: Opened
        switch Self.make(in: scratch, inStore: false) {
        case .success(let made): next = made
        case .failure(let other):
            throw BodySinkError("writing the download failed: \(error.description), and in \(scratch): \(other.description)")
        }
        if let other = Self.copy(length, from: reader, to: next.writer) {
            close(next.writer)
            if let r = next.reader { close(r) }
            throw BodySinkError("writing the download failed: \(error.description), and in \(scratch): \(other.description)")
        }
        opened = next
        close(file.writer)
        close(reader)
        if let path = file.path { unlink(path) }
        return next
    }

    private func giveUpOnStore(_ error: StoredFile.WriteError) {
        guard storeFailure == nil else { return }
        storeFailure = error
        store?.failed(error)
    }

    /// A new file in the store's `tmp`, made again if someone removed the
    /// directory, and after the store made room when there was none.
    private static func make(in store: Store) -> Result<Opened, StoredFile.WriteError> {
        var remade = false
        while true {
            switch make(in: store.temp, inStore: true) {
            case .success(let made): return .success(made)
            case .failure(let error) where error.code == ENOENT && !remade:
                // The store's directories were removed under us: make them again, once.
                remade = true
                try? FileManager.default.createDirectory(atPath: store.temp, withIntermediateDirectories: true)
            case .failure(let error) where error.isForRoom && store.makeRoom():
                continue
            case .failure(let error):
                return .failure(error)
            }
        }
    }

    /// A new file in `directory`, open for writing and for reading; unlinked
    /// at once unless `inStore`.
    private static func make(in directory: String, inStore: Bool) -> Result<Opened, StoredFile.WriteError> {
        let path = "\(directory)/\(inStore ? "" : "thumbd-download-")\(String(UInt64.random(in: 0...UInt64.max), radix: 16)).part"
        let writer = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard writer >= 0 else { return .failure(StoredFile.WriteError(code: errno)) }
        let reader = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else {
            let code = errno
            close(writer)
            unlink(path)
            return .failure(StoredFile.WriteError(code: code))
        }
        if !inStore { unlink(path) }
        return .success(Opened(writer: writer, reader: reader, path: inStore ? path : nil))
    }

    /// A new file in anonymous memory (memfd), open for writing and, through
    /// `/proc/self/fd`, read-only for the original.
    private static func makeInMemory() -> Result<Opened, StoredFile.WriteError> {
        let writer = thumbd_sys_memfd("thumbd-download")
        guard writer >= 0 else { return .failure(StoredFile.WriteError(code: errno)) }
        var reader = Glibc.open("/proc/self/fd/\(writer)", O_RDONLY | O_CLOEXEC)
        if reader < 0 { reader = fcntl(writer, F_DUPFD_CLOEXEC, 0) }   // no /proc: the same, writable description
        guard reader >= 0 else {
            let code = errno
            close(writer)
            return .failure(StoredFile.WriteError(code: code))
        }
        return .success(Opened(writer: writer, reader: reader, path: nil))
    }

    /// Copies the first `count` bytes of `reader` to `writer` through a
    /// bounded buffer; the error when a read or write failed.
    private static func copy(_ count: Int, from reader: Int32, to writer: Int32) -> StoredFile.WriteError? {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, min(count, 1 << 20)), alignment: 1)
        defer { buffer.deallocate() }
        var done = 0
        while done < count {
            let n = pread(reader, buffer.baseAddress!, min(buffer.count, count - done), off_t(done))
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return StoredFile.WriteError(code: n < 0 ? errno : EIO) }
            guard StoredFile.writeAll(writer, UnsafeRawBufferPointer(rebasing: buffer[..<n]), at: done) else {
                return StoredFile.WriteError(code: errno)
            }
            done += n
        }
        return nil
    }
}
