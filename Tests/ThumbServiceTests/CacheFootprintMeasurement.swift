import Foundation
import Testing
@testable import ThumbFetch
import ThumbRender
@testable import ThumbService
import ThumbTestSupport

/// How `CostLRU.entryOverhead` and the caches' counted bytes were checked
/// against real memory: fill a cache with many small entries and compare
/// the growth of RSS with the bytes it reports. Not a test (RSS is shared
/// with whatever else runs in the process): run it alone, by hand,
///
///     THUMBD_MEASURE_FOOTPRINT=1 swift test --filter CacheFootprintMeasurement
///
/// and read the printed figures. Run each test alone (`--filter
/// CacheFootprintMeasurement/negativeCache`): tests running side by side
/// share the RSS. On the development machine (x86_64, glibc 2.36, 50 000
/// entries; RSS growth / counted, bytes per entry):
///
/// | cache, URL length          | RSS   | counted | counted before       |
/// |----------------------------|-------|---------|----------------------|
/// | memory cache, 2000 bytes   | 2 557 | 2 637   | 4 (the pixels)       |
/// | memory cache, 40 bytes     |   545 |   669   | 4                    |
/// | negative cache, 2000 bytes | 2 277 | 2 354   | — (bound by count)   |
/// | negative cache, 40 bytes   |   312 |   386   | —                    |
/// | hit shortcuts, 2000 bytes  | 5 100 | 5 149   | 4 493                |
/// | hit shortcuts, 40 bytes    | 1 160 | 1 213   |   573                |
///
/// (`HitShortcutsFootprintMeasurement` in ThumbAPITests for the last two.)
/// `CostLRU.entryOverhead` is 461 bytes of that for the memory cache, 226
/// for the negative cache and 413 for the hit shortcuts; counted at the most
/// the tables take, it stays above RSS, by 2–4 % where URLs are long.
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
