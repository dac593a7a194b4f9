import Foundation
import Testing
@testable import ThumbImaging
import ThumbRender
@testable import ThumbService

/// Facts beside their original (`DiskStore+Facts.swift`): kept, counted,
/// surviving a restart, and gone when the original goes or changes.
@Suite struct DiskStoreFactsTests {
    private let root = NSTemporaryDirectory() + "thumbd-facts-\(UUID().uuidString)"
    private let url = "http://a/x.jpg"

    private func metadata(_ data: [UInt8]) -> OriginalMetadata {
        OriginalMetadata(url: url, etag: nil, lastModified: nil, fetchedAt: 1000, length: data.count,
                         sha256: Digest.hex(Digest.sha256(data)))
    }

    /// Facts of the shape a render computes (the fields beyond the digest and focus are fixed).
    static func facts(sha256: String, focus: FocalPoint) -> OriginalFacts {
        OriginalFacts(sha256: sha256, format: .jpeg, width: 640, height: 427, orientation: 6, hasAlpha: false,
                      frames: 1, thumbhash: Array(Data(base64Encoded: "D9cFHYQsd2ZwiZd1h4iIdnZwbgfX")!),
                      averageColor: "#3e4458", focus: focus)
    }

    private var factsPath: String { DiskStore.path(root, DiskStore.name(for: url)) + DiskStore.factsSuffix }

    private func size(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
    }

    @Test func factsAreKeptCountedAndReadBackAfterARestart() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let data = [UInt8](repeating: 7, count: 3000)
        let facts = Self.facts(sha256: metadata(data).sha256, focus: FocalPoint(x: 420, y: 370))
        do {
            let store = try DiskStore(directory: root, maxBytes: 100_000)
            #expect(!store.keepFacts(facts, url: url), "no original, no facts")
            #expect(!FileManager.default.fileExists(atPath: factsPath))
            #expect(store.store(url: url, data: data, metadata: metadata(data)))
            let before = store.statistics.bytes
            #expect(store.keepFacts(facts, url: url))
            #expect(store.facts(url: url, sha256: facts.sha256) == facts)
            #expect(store.facts(url: url, sha256: String(repeating: "0", count: 64)) == nil, "other bytes' facts")
            #expect(store.statistics.bytes == before + size(factsPath) && size(factsPath) > 0)
            #expect(store.statistics.entries == 1)
        }
        let reopened = try DiskStore(directory: root, maxBytes: 100_000)
        #expect(reopened.facts(url: url, sha256: facts.sha256) == facts)
        #expect(reopened.statistics.bytes == size(DiskStore.path(root, DiskStore.name(for: url))) + size(factsPath))
        #expect(reopened.remove(url: url))
        #expect(!FileManager.default.fileExists(atPath: factsPath), "purged with the original")
        #expect(reopened.facts(url: url, sha256: facts.sha256) == nil)
    }

    @Test func changedBytesDropTheFactsAndSameBytesKeepThem() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try DiskStore(directory: root, maxBytes: 100_000)
        let old = [UInt8](repeating: 1, count: 2000)
        let facts = Self.facts(sha256: metadata(old).sha256, focus: FocalPoint(x: 1, y: 999))
        #expect(store.store(url: url, data: old, metadata: metadata(old)))
        #expect(store.keepFacts(facts, url: url))
        // A revalidation's 304 stores the same bytes again: the facts stay.
        #expect(store.store(url: url, data: old, metadata: metadata(old)))
        #expect(store.facts(url: url, sha256: facts.sha256) == facts)
        #expect(store.statistics.bytes == size(DiskStore.path(root, DiskStore.name(for: url))) + size(factsPath))
        // New bytes: the old facts go, file and bytes.
        let new = [UInt8](repeating: 2, count: 2000)
        #expect(store.store(url: url, data: new, metadata: metadata(new)))
        #expect(!FileManager.default.fileExists(atPath: factsPath))
        #expect(store.statistics.bytes == size(DiskStore.path(root, DiskStore.name(for: url))))
        // Facts for bytes the store no longer holds are refused.
        #expect(!store.keepFacts(facts, url: url))
    }

    @Test func evictionAndAnOrphanAtStartTakeTheFactsFile() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let data = [UInt8](repeating: 3, count: 4000)
        do {
            let store = try DiskStore(directory: root, maxBytes: 9000)
            #expect(store.store(url: url, data: data, metadata: metadata(data)))
            #expect(store.keepFacts(Self.facts(sha256: metadata(data).sha256, focus: FocalPoint(x: 0, y: 0)), url: url))
            let other = "http://a/other.jpg"
            let more = [UInt8](repeating: 4, count: 4800)
            let meta = OriginalMetadata(url: other, etag: nil, lastModified: nil, fetchedAt: 1, length: more.count,
                                        sha256: Digest.hex(Digest.sha256(more)))
            #expect(store.store(url: other, data: more, metadata: meta))
            #expect(store.load(url: url) == nil, "evicted for room")
            #expect(!FileManager.default.fileExists(atPath: factsPath), "with its facts")
            #expect(store.statistics.bytes <= 9000)
        }
        // A facts file whose original is missing (a crash between two unlinks) goes at start.
        try FileManager.default.createDirectory(atPath: (factsPath as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: factsPath, contents: Data("{}".utf8))
        _ = try DiskStore(directory: root, maxBytes: 9000)
        #expect(!FileManager.default.fileExists(atPath: factsPath))
    }

    @Test func malformedOrForeignFactsAreIgnored() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try DiskStore(directory: root, maxBytes: 100_000)
        let data = [UInt8](repeating: 5, count: 100)
        #expect(store.store(url: url, data: data, metadata: metadata(data)))
        let sha = metadata(data).sha256
        let good = String(decoding: Self.facts(sha256: sha, focus: FocalPoint(x: 1, y: 2)).serialized, as: UTF8.self)
        func spoilt(_ from: String, _ to: String) -> String {
            precondition(good.contains(from), from)
            return good.replacingOccurrences(of: from, with: to)
        }
        for text in ["", "{", "[]",
                     // What release 1 stored: facts of an older canonical decode are computed again.
                     #"{"version":1,"sha256":"\#(sha)","focus":[1,2]}"#,
                     spoilt(#""version":2"#, #""version":99"#), spoilt("[1,2]", "[1001,0]"), spoilt("[1,2]", "[1]"),
                     spoilt(#""width":640"#, #""width":0"#), spoilt(#""orientation":6"#, #""orientation":9"#),
                     spoilt(#""frames":1"#, #""frames":0"#), spoilt(#""format":"jpeg""#, #""format":"bmp""#),
                     spoilt("#3e4458", "#3E4458"), spoilt("#3e4458", "red"), spoilt("D9cFHYQsd2ZwiZd1h4iIdnZwbgfX", "D9cFHYQs"),
                     spoilt("D9cFHYQsd2ZwiZd1h4iIdnZwbgfX", "not base64!"), spoilt(#""hasAlpha":false"#, #""hasAlpha":0"#)] {
            FileManager.default.createFile(atPath: factsPath, contents: Data(text.utf8))
            #expect(store.facts(url: url, sha256: sha) == nil, "\(text)")
        }
        FileManager.default.createFile(atPath: factsPath, contents: Data(repeating: 32, count: 20_000))
        #expect(store.facts(url: url, sha256: sha) == nil, "over the size limit")
        FileManager.default.createFile(atPath: factsPath, contents: Data(good.utf8))
        #expect(store.facts(url: url, sha256: sha) == Self.facts(sha256: sha, focus: FocalPoint(x: 1, y: 2)))
    }
}
