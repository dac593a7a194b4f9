import Foundation
import Glibc
import ThumbRender

/// An original's facts (`OriginalFacts`) beside it in the store: a small file
/// `<name>.facts` next to `<name>`, counted in the original's cost, evicted,
/// purged and trimmed with it, and ignored when its digest is not the
/// original's (the original changed).
extension DiskStore {
    static let factsSuffix = ".facts"
    /// Facts are a few hundred bytes; anything larger is not ours.
    static let factsLimit = 16 * 1024

    /// Whether the store holds `url`'s original, and so can keep its facts.
    func holds(url: String) -> Bool {
        state.withLock { $0.lru.contains(Self.name(for: url)) }
    }

    /// The metadata of `url`'s stored original, without counting a hit or
    /// touching its recency (the shared store's sidecar is written from it).
    func storedMetadata(url: String) -> OriginalMetadata? {
        guard holds(url: url) else { return nil }
        return StoredFile.open(Self.path(directory, Self.name(for: url)), expectedURL: url)?.metadata
    }

    /// `url`'s stored facts for the original whose digest is `sha256`; nil
    /// when none are stored, they belong to other bytes or do not parse.
    public func facts(url: String, sha256: String) -> OriginalFacts? {
        let path = Self.path(directory, Self.name(for: url)) + Self.factsSuffix
        guard let bytes = Self.readSmallFile(path), let facts = OriginalFacts.parse(bytes),
              facts.sha256 == sha256 else { return nil }
        return facts
    }

    /// Keeps `facts` beside `url`'s original, when that original (with the
    /// same digest) is in the store; false otherwise or when the write
    /// failed. Written to `tmp` and renamed, so a crash leaves either the
    /// old file or the new one. A write that fails for room is tried again
    /// once the store removed older originals (never this one); one that
    /// still fails is told like any failed write, and the facts stay in memory only.
    @discardableResult
    public func keepFacts(_ facts: OriginalFacts, url: String) -> Bool {
        let name = Self.name(for: url)
        guard holds(url: url),
              let stored = StoredFile.open(Self.path(directory, name), expectedURL: url),
              stored.metadata.sha256 == facts.sha256 else { return false }
        let bytes = facts.serialized
        let temp = "\(directory)/tmp/\(name)\(Self.factsSuffix).\(UUID().uuidString)"
        var fd: Int32 = -1
        var written = false
        repeat {
            if fd < 0 { fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
            written = fd >= 0 && StoredFile.writeAll(fd, bytes, at: 0)
        } while !written && StoredFile.WriteError(code: errno).isForRoom && makeRoom(sparing: name)
        let failure = StoredFile.WriteError(code: errno)
        if fd >= 0 { close(fd) }
        let kept = state.withLock { s in
            // Under the lock: an original evicted meanwhile gets no facts file left behind.
            guard written, let size = s.lru.get(name), rename(temp, Self.path(directory, name) + Self.factsSuffix) == 0 else {
                unlink(temp)
                return false
            }
            let evicted = s.lru.insert(size, for: name, cost: size + bytes.count) ?? []
            s.evictions += evicted.count
            for (victim, _) in evicted { Self.unlinkEntry(directory, victim) }
            return true
        }
        if !written { writeFailed(failure) }
        return kept
    }

    /// The size of the facts file an original being stored as `name` keeps:
    /// its own when they are facts of `sha256`, else 0 after removing them.
    func keptFactsSize(name: String, sha256: String) -> Int {
        let path = Self.path(directory, name) + Self.factsSuffix
        guard let bytes = Self.readSmallFile(path) else { return 0 }
        guard OriginalFacts.parse(bytes)?.sha256 == sha256 else {
            unlink(path)
            return 0
        }
        return bytes.count
    }

    private static func readSmallFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: factsLimit + 1)
        var count = 0
        while count < buffer.count {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { break }
            count += n
        }
        return count <= factsLimit ? Array(buffer[..<count]) : nil
    }
}
