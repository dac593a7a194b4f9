import Foundation
import Testing
import ThumbTestSupport
@testable import ThumbService
import ThumbTestSupport

@Suite struct DiskStoreTests {
    private let root: String

    init() throws {
        root = NSTemporaryDirectory() + "thumbd-store-\(UUID().uuidString)"
    }

    private func metadata(_ url: String, _ data: [UInt8]) -> OriginalMetadata {
        OriginalMetadata(url: url, etag: "\"e1\"", lastModified: nil, fetchedAt: 1000, length: data.count,
                         sha256: Digest.hex(Digest.sha256(data)))
    }

    private func fileSize(_ store: DiskStore, _ url: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: DiskStore.path(store.directory, DiskStore.name(for: url)))[.size] as? Int) ?? -1
    }

    @Test func storesAndLoadsWholeOriginals() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try DiskStore(directory: root, maxBytes: 1_000_000)
        let data = (0..<5000).map { UInt8($0 & 255) }
        #expect(store.load(url: "http://a/x.jpg") == nil)
        #expect(store.store(url: "http://a/x.jpg", data: data, metadata: metadata("http://a/x.jpg", data)))
        let loaded = try #require(store.load(url: "http://a/x.jpg"))
        #expect(try loaded.file.read() == data && loaded.metadata == metadata("http://a/x.jpg", data))
        let s = store.statistics
        #expect(s.entries == 1 && s.hits == 1 && s.misses == 1 && s.bytes == fileSize(store, "http://a/x.jpg"))
        // Sharded by the hash of the URL.
        let name = DiskStore.name(for: "http://a/x.jpg")
        #expect(FileManager.default.fileExists(atPath: "\(root)/\(name.prefix(2))/\(name.dropFirst(2).prefix(2))/\(name)"))
    }

    @Test func aFileWhoseLengthDoesNotMatchIsNeverServed() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try DiskStore(directory: root, maxBytes: 1_000_000)
        let data = [UInt8](repeating: 7, count: 4000)
        store.store(url: "http://a/t.png", data: data, metadata: metadata("http://a/t.png", data))
        let path = DiskStore.path(root, DiskStore.name(for: "http://a/t.png"))
        #expect(truncate(path, off_t(fileSize(store, "http://a/t.png") - 1)) == 0)
        #expect(store.load(url: "http://a/t.png") == nil)
        #expect(!FileManager.default.fileExists(atPath: path), "a damaged file is removed")
        #expect(store.statistics.entries == 0 && store.statistics.bytes == 0)
    }

    @Test func theByteLimitIsExactAndEvictsLeastRecentlyUsed() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let data = [UInt8](repeating: 1, count: 1000)
        let probe = StoredFile.trailer(for: metadata("http://h/0", data)).count + data.count
        let store = try DiskStore(directory: root, maxBytes: probe * 3)
        for i in 0..<3 { store.store(url: "http://h/\(i)", data: data, metadata: metadata("http://h/\(i)", data)) }
        _ = store.load(url: "http://h/0")                   // 1 is now least recently used
        store.store(url: "http://h/3", data: data, metadata: metadata("http://h/3", data))
        #expect(store.load(url: "http://h/1") == nil)
        #expect(store.load(url: "http://h/0") != nil && store.load(url: "http://h/3") != nil)
        let s = store.statistics
        #expect(s.entries == 3 && s.bytes == probe * 3 && s.evictions == 1 && s.bytes <= s.limitBytes)
    }

    @Test func anOriginalLargerThanTheStoreIsNotKept() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try DiskStore(directory: root, maxBytes: 500)
        let data = [UInt8](repeating: 1, count: 600)
        #expect(!store.store(url: "http://h/big", data: data, metadata: metadata("http://h/big", data)))
        #expect(store.statistics.entries == 0)
    }

    @Test func restartRebuildsTheOrderAndCleansLeftovers() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let data = [UInt8](repeating: 2, count: 1000)
        let probe = StoredFile.trailer(for: metadata("http://h/0", data)).count + data.count
        // Recency is the files' modification time, set from the store's clock.
        let calendar = ManualWallClock()
        do {
            let store = try DiskStore(directory: root, maxBytes: probe * 10, wallClock: calendar)
            for i in 0..<3 {
                store.store(url: "http://h/\(i)", data: data, metadata: metadata("http://h/\(i)", data))
                calendar.advance(by: .seconds(1))
            }
            _ = store.load(url: "http://h/0")
        }
        // An interrupted write leaves a temp file behind.
        FileManager.default.createFile(atPath: root + "/tmp/partial.123", contents: Data([1, 2, 3]))
        let reopened = try DiskStore(directory: root, maxBytes: probe * 2)
        #expect(!FileManager.default.fileExists(atPath: root + "/tmp/partial.123"))
        #expect(reopened.statistics.entries == 2 && reopened.statistics.bytes == probe * 2)
        #expect(reopened.load(url: "http://h/1") == nil, "the least recently used original went first")
        #expect(try reopened.load(url: "http://h/0").map { try $0.file.read() } == data)
        #expect(try reopened.load(url: "http://h/2").map { try $0.file.read() } == data)
    }

    /// Stores written before downloads streamed to disk put the metadata
    /// first (`THUMBD1`): their originals are still served after an upgrade,
    /// and a new write of the same source replaces them with the current format.
    @Test func originalsInTheFirstFormatAreStillRead() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let url = "http://h/old.jpg"
        let data = (0..<3000).map { UInt8($0 % 251) }
        let json = Array(metadata(url, data).json.serialized().utf8)
        let n = UInt32(json.count)
        let v1 = Array("THUMBD1\n".utf8) + [UInt8(n >> 24), UInt8(n >> 16 & 255), UInt8(n >> 8 & 255), UInt8(n & 255)]
            + json + data
        let path = DiskStore.path(root, DiskStore.name(for: url))
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(v1)))
        let store = try DiskStore(directory: root, maxBytes: 1_000_000)
        let loaded = try #require(store.load(url: url))
        #expect(try loaded.file.read() == data && loaded.metadata == metadata(url, data))
        #expect(store.store(url: url, data: data, metadata: metadata(url, data)))
        let rewritten = try #require(FileManager.default.contents(atPath: path))
        #expect(rewritten.prefix(data.count) == Data(data) && rewritten.suffix(8) == Data("THUMBD2\n".utf8))
        #expect(try store.load(url: url).map { try $0.file.read() } == data)
    }

    @Test func removeAndShrink() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try DiskStore(directory: root, maxBytes: 100_000)
        let data = [UInt8](repeating: 3, count: 1000)
        for i in 0..<5 { store.store(url: "http://h/\(i)", data: data, metadata: metadata("http://h/\(i)", data)) }
        #expect(store.remove(url: "http://h/4") && !store.remove(url: "http://h/4"))
        store.setLimit(2500)
        #expect(store.statistics.entries == 2 && store.statistics.bytes <= 2500)
        #expect(store.load(url: "http://h/0") == nil && store.load(url: "http://h/3") != nil)
    }
}
