import Foundation
import Testing
import ThumbTestSupport
@testable import ThumbFetch
@testable import ThumbService

/// How `CostLRU.entryOverhead` and the caches' counted bytes were checked
/// against real memory: fill a cache with many small entries and compare
/// the growth of RSS with the bytes it reports. Not a test (RSS is shared
/// with whatever else runs in the process): run it alone, by hand,
///
///     THUMBD_MEASURE_FOOTPRINT=1 swift test --filter CacheFootprintMeasurement
///
/// and read the printed figures.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["THUMBD_MEASURE_FOOTPRINT"] != nil))
struct CacheFootprintMeasurement {
    static let entries = 50_000

    static func residentBytes() -> Int { ResidentMemory.bytes() }

    static func report(_ what: String, rss: Int, counted: Int) {
        ResidentMemory.report(what, entries: entries, rss: rss, counted: counted)
    }

    /// 1×1 `rgba` renditions, each under its own normalized URL of `urlBytes`.
    @Test(arguments: [2000, 40])
    func memoryCacheRenditions(urlBytes: Int) {
        let cache = MemoryCache<MemoryKey, MemoryItem>(limitBytes: 1 << 40)
        let pad = String(repeating: "p", count: max(0, urlBytes - 30))
        let before = Self.residentBytes()
        for n in 0..<Self.entries {
            let url = URLNormalization.normalize("http://origin.test/\(n)/\(pad)")!
            let variant = ThumbnailVariant(prepared: PreparedVariant(width: n + 1, height: nil), format: .rgba, quality: 82)
            let r = Rendition(bytes: [1, 2, 3, 4], contentType: OutputFormat.rgba.contentType, width: 1, height: 1,
                              etag: Rendition.etag(originalSHA256: String(repeating: "a", count: 64), variant: variant))
            cache.insert(.rendition(r), for: .rendition(url: url, variant))
        }
        Self.report("memory cache, \(urlBytes)-byte URLs, overhead \(CostLRU<MemoryKey, MemoryItem>.entryOverhead)", rss: Self.residentBytes() - before,
                    counted: cache.statistics.bytes)
        withExtendedLifetime(cache) {}
    }

    /// Failures of distinct URLs of `urlBytes`, each with a message naming the host.
    @Test(arguments: [2000, 40])
    func negativeCache(urlBytes: Int) {
        let cache = NegativeCache(ttl: .seconds(3600), limitBytes: 1 << 40)
        let pad = String(repeating: "p", count: max(0, urlBytes - 30))
        let before = Self.residentBytes()
        let host = "origin.test"
        for n in 0..<Self.entries {
            let url = URLNormalization.normalize("http://\(host)/\(n)/\(pad)")!
            // Built at run time, as the fetcher builds its messages (a literal would be on no heap).
            cache.remember(url, .originError("cannot connect to \(host)"))
        }
        Self.report("negative cache, \(urlBytes)-byte URLs, overhead \(NegativeCache.entryOverhead)", rss: Self.residentBytes() - before, counted: cache.bytes)
        withExtendedLifetime(cache) {}
    }
}
