import Foundation
import Testing
@testable import ThumbAPI
@testable import ThumbService

/// The memory-hit path (HTTPServer.md "Memory hits") skips work for a
/// spelling seen before; every rule must still hold on it: a reload, a purge,
/// a different `Accept`, `If-None-Match`, `HEAD` and the statistics.
@Suite(.serialized) struct MemoryHitPathTests {
    private typealias E2E = EndToEndTests

    private func encoded(_ url: String) -> String { url.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }

    @Test func aReloadThatChangesTheSigningKeyRefusesATargetServedFromMemory() throws {
        try E2E.withDaemon({ $0.security.signingKey = "old" }) { daemon, origin in
            let part = "/thumbnail?url=\(encoded(origin.url("/cat.jpg")))&w=40"
            let target = part + "&sig=" + URLSignature.sign(part, key: "old")
            #expect(daemon.get(target).headers["x-cache"] == "origin")
            #expect(daemon.get(target).headers["x-cache"] == "memory")
            var c = daemon.daemon.configuration
            c.security.signingKey = "new"
            _ = daemon.daemon.reload(c)
            let refused = daemon.get(target)
            #expect(refused.status == 403 && String(decoding: refused.body, as: UTF8.self).contains("bad_signature"))
            let resigned = part + "&sig=" + URLSignature.sign(part, key: "new")
            #expect(daemon.get(resigned).headers["x-cache"] == "memory", "the rendition itself is still cached")
        }
    }

    @Test func aReloadThatNarrowsAllowedSizesRefusesATargetServedFromMemory() throws {
        try E2E.withDaemon { daemon, origin in
            let target = "/thumbnail?url=\(encoded(origin.url("/cat.jpg")))&w=40"
            _ = daemon.get(target)
            #expect(daemon.get(target).headers["x-cache"] == "memory")
            var c = daemon.daemon.configuration
            c.service.output.allowedSizes = [.init(width: 64, height: 64)]
            _ = daemon.daemon.reload(c)
            #expect(daemon.get(target).status == 400)
        }
    }

    @Test func aPurgedSourceIsRenderedAgainAndSpellingsShareOneEntry() throws {
        try E2E.withDaemon { daemon, origin in
            let target = "/thumbnail?url=\(encoded(origin.url("/cat.jpg")))&w=40"
            let respelled = "/thumbnail?w=40&url=\(encoded(origin.url("/./cat.jpg")))"
            #expect(daemon.get(target).headers["x-cache"] == "origin")
            #expect(daemon.get(target).headers["x-cache"] == "memory")
            #expect(daemon.get(respelled).headers["x-cache"] == "memory", "another spelling, the same entry")
            let hits = daemon.service.statistics.counters.memoryHits
            #expect(hits == 2)
            let purge = daemon.get("/cache?url=\(encoded(origin.url("/cat.jpg")))", method: "DELETE")
            #expect(purge.status == 200)
            #expect(daemon.get(target).headers["x-cache"] == "origin")
            #expect(daemon.get(respelled).headers["x-cache"] == "memory")
        }
    }

    @Test func acceptIsPartOfTheShortcutAndValidatorsAndHeadStayCorrect() throws {
        try E2E.withDaemon { daemon, origin in
            let target = "/thumbnail?url=\(encoded(origin.url("/cat.jpg")))&w=40"
            let webp = ["Accept": "image/webp,*/*"]
            let first = daemon.get(target, headers: webp)
            #expect(first.headers["content-type"] == "image/webp" && first.headers["vary"] == "Accept")
            let again = daemon.get(target, headers: webp)
            #expect(again.headers["x-cache"] == "memory" && again.headers["content-type"] == "image/webp")
            #expect(again.body == first.body && again.headers["etag"] == first.headers["etag"])
            let plain = daemon.get(target, headers: ["Accept": "image/jpeg"])
            #expect(plain.headers["content-type"] == "image/jpeg" && plain.headers["vary"] == "Accept")

            let etag = try #require(again.headers["etag"])
            let notModified = daemon.get(target, headers: webp.merging(["If-None-Match": etag]) { a, _ in a })
            #expect(notModified.status == 304 && notModified.body.isEmpty)
            #expect(notModified.headers["etag"] == etag && notModified.headers["vary"] == "Accept")
            #expect(notModified.headers["x-image-width"] == nil && notModified.headers["x-cache"] == "memory")

            let head = daemon.get(target, headers: webp, method: "HEAD")
            #expect(head.status == 200 && head.body.isEmpty && head.headers["content-length"] == String(first.body.count))
            #expect(head.headers["x-image-width"] == "40")
        }
    }

    /// A client sending endless distinct 8 KiB targets cannot grow the shortcuts past their bound.
    @Test func shortcutsStayWithinTheirByteLimit() throws {
        let shortcuts = HitShortcuts(limitBytes: 256 << 10)
        let config = ServiceConfiguration()
        let request = try ThumbnailRequest(query: [("url", "http://localhost/a.jpg"), ("w", "10")], config: config)
        let long = String(repeating: "x", count: 3000)
        for n in 0..<2000 {
            shortcuts.remember(.init(target: "/thumbnail?\(n)&\(long)", accept: nil), .init(request: request, fields: nil),
                               generation: 0)
        }
        #expect(shortcuts.count > 10 && shortcuts.count * 3000 <= 256 << 10)
        #expect(shortcuts.entry(.init(target: "/thumbnail?1999&\(long)", accept: nil), generation: 0) != nil,
                "the newest stays")
        #expect(shortcuts.entry(.init(target: "/thumbnail?1999&\(long)", accept: nil), generation: 1) == nil)
        #expect(shortcuts.count == 0, "a new configuration drops them all")
    }

    /// Endless distinct spellings beyond the table's bound: the bound holds
    /// with every byte counted, eviction takes the least recently used
    /// spelling, one per insert, and a spelling being hit survives the churn.
    /// (The table used to evict whichever entry a search of its dictionary
    /// found first, under its lock, so a hot spelling went as readily as any.)
    @Test func churnEvictsTheLeastRecentlyUsedAndKeepsAHotSpelling() throws {
        let shortcuts = HitShortcuts(limitBytes: 256 << 10)
        let request = try ThumbnailRequest(query: [("url", "http://localhost/a.jpg"), ("w", "10")],
                                           config: ServiceConfiguration())
        let pad = String(repeating: "x", count: 1000)
        // Equal lengths, so equal costs: one in, one out.
        func key(_ n: Int) -> HitShortcuts.Key {
            .init(target: "/thumbnail?\(String(format: "%05d", n))&\(pad)", accept: "image/webp,*/*")
        }
        let hot = key(-1)
        shortcuts.remember(hot, .init(request: request, fields: nil), generation: 0)
        var full = 0
        for n in 0..<5000 {
            #expect(shortcuts.entry(hot, generation: 0) != nil, "the hot spelling survives step \(n)")
            let before = shortcuts.count
            shortcuts.remember(key(n), .init(request: request, fields: nil), generation: 0)
            #expect(shortcuts.bytes <= shortcuts.limitBytes)
            if full == 0, shortcuts.count == before { full = n }
            if full > 0 {
                #expect(shortcuts.count == before, "one in, one out")
                #expect(shortcuts.entry(key(n - full), generation: 0) == nil, "the oldest cold one went")
            }
        }
        #expect(full > 100, "entries fit before the first eviction: \(full)")
        let cost = HitShortcuts.cost(key(0), .init(request: request, fields: nil))
        #expect(cost >= key(0).target.utf8.count + request.sourceURL.utf8.count + HitShortcuts.entryOverhead)
        #expect(shortcuts.count * cost <= shortcuts.limitBytes + cost)
    }
}
