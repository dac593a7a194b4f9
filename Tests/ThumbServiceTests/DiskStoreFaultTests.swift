import Foundation
import Synchronization
import Testing
@testable import ThumbService

/// Configuration.md `diskStore`: a store that cannot be written keeps
/// the service answering (originals served without being kept), says so once
/// in the log, and never leaves a partial file.
@Suite struct DiskStoreFaultTests {
    private let root = NSTemporaryDirectory() + "thumbd-store-faults-\(UUID().uuidString)"

    private func metadata(_ url: String, _ data: [UInt8]) -> OriginalMetadata {
        OriginalMetadata(url: url, etag: nil, lastModified: nil, fetchedAt: 1000, length: data.count,
                         sha256: Digest.hex(Digest.sha256(data)))
    }

    private func files(under path: String) -> [String] {
        (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).filter { name in
            var isDir: ObjCBool = false
            return FileManager.default.fileExists(atPath: path + "/" + name, isDirectory: &isDir) && !isDir.boolValue
        }
    }

    /// `tmp` replaced by a file: every write fails (ENOTDIR), as on a broken
    /// or read-only store. Reported once for the whole outage, once on recovery.
    @Test func failingWritesAreReportedOnceAndLeaveNothingBehind() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let reports = Mutex<[String]>([])
        let store = try DiskStore(directory: root, maxBytes: 1 << 20) { message in reports.withLock { $0.append(message) } }
        try FileManager.default.removeItem(atPath: root + "/tmp")
        #expect(FileManager.default.createFile(atPath: root + "/tmp", contents: Data("not a directory".utf8)))
        let data = [UInt8](repeating: 9, count: 4000)
        for n in 0..<5 {
            #expect(!store.store(url: "http://a/\(n).jpg", data: data, metadata: metadata("http://a/\(n).jpg", data)))
        }
        #expect(reports.withLock { $0 }.count == 1)
        #expect(reports.withLock { $0 }.first?.contains("Not a directory") == true, "\(reports.withLock { $0 })")
        #expect(store.statistics.entries == 0 && store.load(url: "http://a/0.jpg") == nil)
        #expect(files(under: root) == ["tmp"], "no partial original anywhere: \(files(under: root))")

        try FileManager.default.removeItem(atPath: root + "/tmp")
        try FileManager.default.createDirectory(atPath: root + "/tmp", withIntermediateDirectories: false)
        #expect(store.store(url: "http://a/0.jpg", data: data, metadata: metadata("http://a/0.jpg", data)))
        #expect(reports.withLock { $0 }.count == 2 && reports.withLock { $0 }.last?.contains("again") == true)
        #expect(try store.load(url: "http://a/0.jpg").map { try $0.file.read() } == data)
    }

    /// Someone removes the whole store directory while the daemon runs: the
    /// next write makes it again instead of failing until a restart.
    @Test func aDeletedStoreDirectoryIsMadeAgain() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let reports = Mutex<[String]>([])
        let store = try DiskStore(directory: root, maxBytes: 1 << 20) { message in reports.withLock { $0.append(message) } }
        let data = [UInt8](repeating: 3, count: 1000)
        #expect(store.store(url: "http://a/x.jpg", data: data, metadata: metadata("http://a/x.jpg", data)))
        try FileManager.default.removeItem(atPath: root)
        #expect(store.load(url: "http://a/x.jpg") == nil, "gone from disk is a miss")
        #expect(store.store(url: "http://a/y.jpg", data: data, metadata: metadata("http://a/y.jpg", data)))
        #expect(try store.load(url: "http://a/y.jpg").map { try $0.file.read() } == data)
        #expect(reports.withLock { $0 }.isEmpty)
    }
}
