import Foundation
import Synchronization
import Testing
@testable import ThumbFetch
import ThumbImaging
import ThumbRender
@testable import ThumbService
import ThumbTestSupport

/// Statistics.md `memoryCache.bytes`: an entry costs every byte it holds,
/// not only its pixels, so the figure follows the memory really held.
@Suite(.serialized) struct MemoryCostTests {
    /// A 1×1 opaque PNG, as thumbd's own encoder writes it.
    static func onePixelPNG() throws -> [UInt8] {
        try ThumbnailPipeline.encode(Bitmap(width: 1, height: 1, pixels: [9, 8, 7, 255]), format: .png, quality: 82).bytes
    }

    /// The issue's case in small: a 1×1 source under a 2 KB URL asked as
    /// `rgba` at many widths makes two 4-byte entries per width, each
    /// holding its own copy of the URL. Counting pixels only reported 8 bytes
    /// per width while each held over 4 KB.
    @Test func tinyVariantsOfALongURLCountTheURLTheyHold() throws {
        let origin = try TestOrigin(extraRoutes: ["/one.png": try Self.onePixelPNG()])
        defer { origin.stop() }
        var c = ServiceConfiguration()
        c.origin.allowPrivateNetworks = true
        c.limits.maxRenderSeconds = 600
        let store = NSTemporaryDirectory() + "thumbd-cost-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: store) }
        let s = ThumbnailService(configuration: c, fetcher: Fetcher(policy: FetchPolicy(configuration: c)),
                                 disk: try DiskStore(directory: store, maxBytes: 10 << 20))
        defer { s.renders.shutdown() }
        let url = origin.url("/one.png") + "?pad=" + String(repeating: "p", count: 1990)
        let widths = 1...100
        for w in widths {
            let r = try ThumbnailRequest(query: [("url", url), ("w", String(w)), ("format", "rgba")], config: c)
            guard case .success(let result) = answer(s, r) else { Issue.record("w=\(w) failed"); return }
            #expect(result.rendition.bytes.count == 4)
        }
        let stats = s.memory.statistics
        #expect(stats.entries == 2 * widths.count + 1, "a prepared bitmap and a rendition per width, and the facts")
        #expect(stats.bytes >= stats.entries * (url.utf8.count + CostLRU<MemoryKey, MemoryItem>.entryOverhead),
                "\(stats.bytes) bytes counted for \(stats.entries) entries of a \(url.utf8.count)-byte URL")
        #expect(stats.bytes <= stats.limitBytes)
        #expect(origin.hits("/one.png") == 1)
    }

    /// The parts, as `MemoryCache.cost` adds them: key strings, value
    /// buffers (by capacity) and strings, and the slot.
    @Test func anEntryCostsItsKeyItsBuffersAndItsSlot() {
        let url = "http://origin.test/" + String(repeating: "u", count: 500)
        let etag = Rendition.etag(originalSHA256: String(repeating: "a", count: 64),
                                  variant: ThumbnailVariant(prepared: PreparedVariant(width: 1, height: nil),
                                                            format: .rgba, quality: 82))
        var bytes: [UInt8] = [1, 2, 3, 4]
        bytes.reserveCapacity(1000)
        let rendition = Rendition(bytes: bytes, contentType: "application/octet-stream", width: 1, height: 1, etag: etag)
        let key = MemoryKey.rendition(url: url, rendition.variantForTest)
        let cost = MemoryCache<MemoryKey, MemoryItem>.cost(.rendition(rendition), for: key)
        #expect(cost >= url.utf8.count + 1000 + etag.utf8.count + CostLRU<MemoryKey, MemoryItem>.entryOverhead)
        let cache = MemoryCache<MemoryKey, MemoryItem>(limitBytes: 1 << 20)
        #expect(cache.insert(.rendition(rendition), for: key))
        #expect(cache.statistics.bytes == cost)
        // The content type is a literal: counted as no heap.
        #expect(cost < url.heapBytes + bytes.heapBytes + etag.heapBytes + CostLRU<MemoryKey, MemoryItem>.entryOverhead + 1)
        // A 15-byte string lives inside the String itself: no heap.
        #expect("http://a.test/b".heapBytes == 0 && String(repeating: "x", count: 16).heapBytes >= 16 + 32)
        #expect(Heap.array([UInt8]()) == 0 && Heap.allocation(1) == 32 && Heap.allocation(25) == 48)
    }

    /// Normalized URLs are what the caches keep: assembled in one buffer,
    /// they carry no growth slack the count could miss.
    @Test func aNormalizedURLIsOneExactAllocation() throws {
        let long = "http://Origin.Test/" + String(repeating: "p", count: 2000) + "?q=1"
        let normalized = try #require(URLNormalization.normalize(long))
        #expect(normalized.utf8.count == long.utf8.count)
        #expect(Heap.string(normalized) == Heap.allocation(32 + normalized.utf8.count + 1))
    }
}

private extension Rendition {
    var variantForTest: ThumbnailVariant {
        ThumbnailVariant(prepared: PreparedVariant(width: width, height: nil), format: .rgba, quality: 82)
    }
}
