import Foundation
import Testing
import ThumbTestSupport
@testable import ThumbAPI
@testable import ThumbService

/// How the hit shortcuts' counted bytes were checked against real memory
/// (see `CacheFootprintMeasurement` in ThumbServiceTests): run by hand,
///
///     THUMBD_MEASURE_FOOTPRINT=1 swift test --filter HitShortcutsFootprintMeasurement
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["THUMBD_MEASURE_FOOTPRINT"] != nil))
struct HitShortcutsFootprintMeasurement {
    static let entries = 50_000

    /// Distinct spellings of `urlBytes`-long source URLs with their prepared
    /// fields, as a memory hit leaves them.
    @Test(arguments: [2000, 40])
    func shortcuts(urlBytes: Int) throws {
        let shortcuts = HitShortcuts(limitBytes: 1 << 40)
        let config = ServiceConfiguration()
        let pad = String(repeating: "p", count: max(0, urlBytes - 30))
        let accept = ["image/avif,image/webp,*/*;q=0.8"]
        // What the table counted before every byte was: 128 per entry and the strings' and fields' counts.
        var countedBefore = 0
        let before = ResidentMemory.bytes()
        for n in 0..<Self.entries {
            let url = "http://origin.test/\(n)/\(pad)"
            let target = "/thumbnail?url=\(url.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&w=64"
            let request = try ThumbnailRequest(query: [("url", url), ("w", "64")], config: config, accept: accept[0])
            let rendition = Rendition(bytes: [1, 2, 3, 4], contentType: "image/webp", width: 64, height: 64,
                                      etag: Rendition.etag(originalSHA256: String(repeating: "a", count: 64),
                                                           variant: request.variant))
            let fields = AnswerFields(rendition, cacheControl: "public, max-age=\(86400)", varies: true)
            // A decoded header value is a fresh string, as the server hands it over.
            let key = HitShortcuts.Key(target: target, accept: String(decoding: Array(accept[0].utf8), as: UTF8.self))
            shortcuts.remember(key, .init(request: request, fields: fields), generation: 0)
            countedBefore += 128 + target.utf8.count + accept[0].utf8.count + request.sourceURL.utf8.count
                + fields.ok.count + fields.notModified.count + fields.etag.utf8.count
        }
        ResidentMemory.report("hit shortcuts, \(urlBytes)-byte URLs, overhead \(HitShortcuts.entryOverhead)",
                              entries: Self.entries, rss: ResidentMemory.bytes() - before, counted: shortcuts.bytes)
        print("footprint hit shortcuts: counted before \(countedBefore / Self.entries) B/entry")
        withExtendedLifetime(shortcuts) {}
    }
}
