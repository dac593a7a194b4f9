import Foundation
import Synchronization
import ThumbClock
import ThumbFetch
import ThumbRender

/// The disk store of originals (Configuration.md `diskStore`): one file per source URL,
/// named by the URL's SHA-256 in two levels of shard directories, bounded by an
/// exact byte limit with least-recently-used eviction.
///
/// The LRU order lives in memory. At start it is rebuilt from a directory scan
/// ordered by modification time, which the store itself sets from its wall
/// clock on every write and hit, so the order survives restarts without
/// trusting atime (relatime/noatime).
public final class DiskStore: Sendable {
    /// Figures for `/stats`.
    public struct Statistics: Equatable, Sendable {
        public var entries = 0
        public var bytes = 0
        public var limitBytes = 0
        public var hits = 0
        public var misses = 0
        public var evictions = 0
        public var revalidations = 0
        /// Originals that could not be kept because a write failed (Configuration.md `diskStore`).
        public var writeFailures = 0

        public init(entries: Int = 0, bytes: Int = 0, limitBytes: Int, hits: Int = 0, misses: Int = 0,
                    evictions: Int = 0, revalidations: Int = 0, writeFailures: Int = 0) {
            (self.entries, self.bytes, self.limitBytes) = (entries, bytes, limitBytes)
            (self.hits, self.misses, self.evictions, self.revalidations) = (hits, misses, evictions, revalidations)
            self.writeFailures = writeFailures
        }
    }

    struct State {
        var lru: CostLRU<String, Int>
        var hits = 0
        var misses = 0
        var evictions = 0
        var revalidations = 0
        var writeFailures = 0
        /// Set by a failed write, cleared by the next good one: a full or
        /// broken store is reported once, not per request.
        var writeFailing = false
    }

    public let directory: String
    let state: Mutex<State>
    /// Told when writes start failing (and working again): the daemon logs it.
    private let report: @Sendable (String) -> Void
    /// Stamps files with their recency (a calendar time: it is read back
    /// after a restart).
    private let wallClock: any WallClock

    /// Opens (creating) the store, removes leftovers of interrupted writes and
    /// downloads (`tmp`), and rebuilds the LRU order from the files present.
    /// A store that cannot be made for want of room or on a read-only file
    /// system still opens, with what it holds: it is told, and writes go on
    /// failing over (Configuration.md `diskStore`); other failures throw.
    public init(directory: String, maxBytes: Int, wallClock: any WallClock = SystemWallClock(),
                report: @escaping @Sendable (String) -> Void = { _ in }) throws(ServiceError) {
        self.directory = directory
        self.report = report
        self.wallClock = wallClock
        let fm = FileManager.default
        let tmp = directory + "/tmp"
        let made = Self.makeDirectories(tmp)
        let failure = made == 0 ? nil : StoredFile.WriteError(code: made)
        if let failure, !(failure.isForRoom || failure.code == EROFS) {
            throw .internalError("cannot create disk store at \(directory): \(failure.description)")
        }
        for leftover in (try? fm.contentsOfDirectory(atPath: tmp)) ?? [] {
            unlink(tmp + "/" + leftover)
        }
        var found: [(name: String, size: Int, mtime: Double)] = []
        var factsSizes: [String: Int] = [:]
        for shard1 in (try? fm.contentsOfDirectory(atPath: directory)) ?? [] where Self.isShard(shard1) {
            for shard2 in (try? fm.contentsOfDirectory(atPath: "\(directory)/\(shard1)")) ?? [] where Self.isShard(shard2) {
                let dir = "\(directory)/\(shard1)/\(shard2)"
                for name in (try? fm.contentsOfDirectory(atPath: dir)) ?? [] {
                    if name.hasSuffix(Self.factsSuffix), Self.isHash(String(name.dropLast(Self.factsSuffix.count))) {
                        var st = stat()
                        if stat("\(dir)/\(name)", &st) == 0 { factsSizes[String(name.dropLast(Self.factsSuffix.count))] = Int(st.st_size) }
                        continue
                    }
                    guard Self.isHash(name) else { continue }
                    var st = stat()
                    guard stat("\(dir)/\(name)", &st) == 0 else { continue }
                    let mtime = Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9
                    found.append((name, Int(st.st_size), mtime))
                }
            }
        }
        var lru = CostLRU<String, Int>(limit: maxBytes, entryDivisor: 1)
        for file in found.sorted(by: { $0.mtime < $1.mtime }) {
            lru.insert(file.size, for: file.name, cost: file.size + (factsSizes[file.name] ?? 0))
        }
        // With a smaller limit than last run the scan's trims chose victims; so far only the index forgot them.
        let kept = Set(lru.keysByRecency)
        for file in found where !kept.contains(file.name) { Self.unlinkEntry(directory, file.name) }
        // Facts whose original is gone go too.
        for name in factsSizes.keys where !kept.contains(name) { unlink(Self.path(directory, name) + Self.factsSuffix) }
        state = Mutex(State(lru: lru, writeFailing: failure != nil))
        if let failure { report(Self.failingMessage(directory, failure)) }
    }

    /// The stored original for `url`, its metadata checked against the
    /// file's length; nil (a miss) otherwise. The bytes are not read: the
    /// returned file keeps them readable, even if the original is evicted or
    /// purged before they are.
    public func load(url: String) -> (metadata: OriginalMetadata, file: OriginalFile)? {
        let name = Self.name(for: url)
        let path = Self.path(directory, name)
        let known = state.withLock { $0.lru.contains(name) }
        guard known, let stored = StoredFile.open(path, expectedURL: url) else {
            state.withLock { s in
                s.misses += 1
                if known, s.lru.remove(name) != nil { Self.unlinkEntry(directory, name) }
            }
            return nil
        }
        state.withLock { s in
            s.hits += 1
            _ = s.lru.get(name)
        }
        touch(path)
        return stored
    }

    /// A sink for a download that may end up here: a temporary file in `tmp`
    /// (removed at the next start if a crash leaves it), or, while the store
    /// cannot be written, one in `scratch` that is never kept.
    func newDownload(scratch: String?) -> DownloadFile {
        DownloadFile(store: downloadStore, scratch: scratch)
    }

    private var downloadStore: DownloadFile.Store {
        DownloadFile.Store(temp: directory + "/tmp", makeRoom: { [self] in makeRoom() },
                           failed: { [self] error in writeFailed(error) })
    }

    /// Keeps a finished download as `url`'s original by renaming its file into
    /// place (no copy), after appending `metadata` and flushing it to disk.
    /// False when it is larger than the whole store (it is then served but
    /// not kept, Configuration.md), was written outside the store because the
    /// store could not be written, or a write failed: those two count in
    /// `writeFailures`. The download then removes its file when dropped.
    @discardableResult
    func keep(_ download: DownloadFile, url: String, metadata: OriginalMetadata) -> Bool {
        let name = Self.name(for: url)
        let trailer = StoredFile.trailer(for: metadata)
        let size = download.length + trailer.count
        // Facts stored for the bytes this replaces stay only if the bytes are the same.
        let factsSize = keptFactsSize(name: name, sha256: metadata.sha256)
        guard size <= state.withLock({ $0.lru.limit }) else { return false }
        guard let temp = download.temporaryPath else {
            if download.storeFailure != nil { state.withLock { $0.writeFailures += 1 } }
            return false
        }
        let final = Self.path(directory, name)
        var result = download.seal(with: trailer)
        if case .success = result { result = place(temp, as: name) }
        if case .failure(let error) = result {
            download.notKept(error)
            writeFailed(error)
            state.withLock { $0.writeFailures += 1 }
            return false
        }
        download.kept()
        touch(final)
        if state.withLock({ s in defer { s.writeFailing = false }; return s.writeFailing }) {
            report("disk store: writing in \(directory) again")
        }
        state.withLock { s in
            let evicted = s.lru.insert(size, for: name, cost: size + factsSize) ?? []
            s.evictions += evicted.count
            // Deleting under the lock keeps a concurrent store of a victim from being unlinked after its rename.
            for (victim, _) in evicted { Self.unlinkEntry(directory, victim) }
        }
        return true
    }

    /// Stores `url`'s original again with new metadata (a revalidation the
    /// origin answered `304`): the bytes are copied from `file` through a
    /// bounded buffer into a new file, which replaces the old one by rename.
    @discardableResult
    func refresh(url: String, file: OriginalFile, metadata: OriginalMetadata) -> Bool {
        let download = DownloadFile(store: downloadStore, scratch: nil)
        do throws(BodySinkError) { try file.copy(into: download) } catch { return notKept(download) }
        return keep(download, url: url, metadata: metadata)
    }

    /// Stores an original held in memory (tests and tools; the service
    /// streams its downloads, `newDownload`). False as for `keep`.
    @discardableResult
    public func store(url: String, data: [UInt8], metadata: OriginalMetadata) -> Bool {
        let download = DownloadFile(store: downloadStore, scratch: nil)
        let written = data.withUnsafeBytes { bytes in (try? download.write(bytes)) != nil }
        return written ? keep(download, url: url, metadata: metadata) : notKept(download)
    }

    /// False, after counting in `writeFailures` a download the store could not hold.
    private func notKept(_ download: DownloadFile) -> Bool {
        if download.storeFailure != nil { state.withLock { $0.writeFailures += 1 } }
        return false
    }

    /// Renames a sealed download into place as `name`, making its shard
    /// directories; a failure for room is tried again once the store made some.
    private func place(_ temp: String, as name: String) -> Result<Void, StoredFile.WriteError> {
        let outer = "\(directory)/\(name.prefix(2))"
        let inner = "\(outer)/\(name.dropFirst(2).prefix(2))"
        while true {
            if Self.makeDirectory(outer) && Self.makeDirectory(inner) && rename(temp, Self.path(directory, name)) == 0 {
                return .success(())
            }
            let error = StoredFile.WriteError(code: errno)
            guard error.isForRoom, makeRoom() else { return .failure(error) }
        }
    }

    /// Removes the least recently used original (and its facts) for a write
    /// that failed for room, whatever `maxBytes` says (Configuration.md
    /// `diskStore`). False when the store is empty or the file cannot be
    /// removed (a read-only file system), or it is `sparing` (the original
    /// whose facts are being written): then the write fails over.
    func makeRoom(sparing: String? = nil) -> Bool {
        state.withLock { s in
            guard let victim = s.lru.leastRecentKey, victim != sparing else { return false }
            let path = Self.path(directory, victim)
            guard unlink(path) == 0 || errno == ENOENT else { return false }
            unlink(path + Self.factsSuffix)
            s.lru.remove(victim)
            s.evictions += 1
            return true
        }
    }

    /// A write failed: said once for a whole outage, not per request.
    func writeFailed(_ error: StoredFile.WriteError) {
        if state.withLock({ s in defer { s.writeFailing = true }; return !s.writeFailing }) {
            report(Self.failingMessage(directory, error))
        }
    }

    private static func failingMessage(_ directory: String, _ error: StoredFile.WriteError) -> String {
        "disk store: cannot write in \(directory) (\(error.description)); "
            + "originals are served from the origin without being kept until a write succeeds"
    }

    /// Forgets `url`'s original; true when one was stored.
    @discardableResult
    public func remove(url: String) -> Bool {
        let name = Self.name(for: url)
        return state.withLock { s in
            guard s.lru.remove(name) != nil else { return false }
            Self.unlinkEntry(directory, name)
            return true
        }
    }

    /// Counts a revalidation with the origin (Statistics.md `diskStore.revalidations`).
    public func noteRevalidation() {
        state.withLock { $0.revalidations += 1 }
    }

    /// A new byte limit (config reload); shrinking evicts at once.
    public func setLimit(_ bytes: Int) {
        state.withLock { s in
            let evicted = s.lru.setLimit(bytes)
            s.evictions += evicted.count
            for (victim, _) in evicted { Self.unlinkEntry(directory, victim) }
        }
    }

    public var statistics: Statistics {
        state.withLock { s in
            Statistics(entries: s.lru.count, bytes: s.lru.totalCost, limitBytes: s.lru.limit, hits: s.hits,
                       misses: s.misses, evictions: s.evictions, revalidations: s.revalidations,
                       writeFailures: s.writeFailures)
        }
    }

    /// Sets `path`'s modification time to now on the store's clock: the
    /// recency that a restart's scan will read.
    private func touch(_ path: String) {
        let (seconds, attoseconds) = wallClock.sinceEpoch().components
        let now = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        utimensat(AT_FDCWD, path, [now, now], 0)   // access and modification time
    }

    /// Removes an original's file and its facts (callers hold the lock or own the directory).
    static func unlinkEntry(_ directory: String, _ name: String) {
        unlink(path(directory, name))
        unlink(path(directory, name) + factsSuffix)
    }

    /// `mkdir -p`: 0, or the `errno` of the step that failed.
    static func makeDirectories(_ path: String) -> Int32 {
        if makeDirectory(path) { return 0 }
        guard errno == ENOENT else { return errno }
        let parent = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        guard !parent.isEmpty, parent != path else { return ENOENT }
        let code = makeDirectories(parent)
        guard code == 0 else { return code }
        return makeDirectory(path) ? 0 : errno
    }

    /// `mkdir`, content with a directory already there; false (errno set) otherwise.
    static func makeDirectory(_ path: String) -> Bool {
        if mkdir(path, 0o755) == 0 { return true }
        guard errno == EEXIST else { return false }
        var st = stat()
        guard stat(path, &st) == 0 else { return false }
        if (st.st_mode & S_IFMT) == S_IFDIR { return true }
        errno = ENOTDIR
        return false
    }

    static func name(for url: String) -> String { Digest.hex(Digest.sha256(Array(url.utf8))) }

    static func path(_ directory: String, _ name: String) -> String {
        "\(directory)/\(name.prefix(2))/\(name.dropFirst(2).prefix(2))/\(name)"
    }

    private static func isShard(_ s: String) -> Bool { s.utf8.count == 2 && isHex(s) }
    static func isHash(_ s: String) -> Bool { s.utf8.count == 64 && isHex(s) }
    private static func isHex(_ s: String) -> Bool {
        s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}
