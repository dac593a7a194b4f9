import Foundation
import Testing
@testable import ThumbAPI
import ThumbCodec
import ThumbHashFormat
import ThumbImaging
import ThumbRender
import ThumbService
import ThumbTestSupport

/// `GET`/`HEAD /info` over real sockets with a loopback origin (API.md § /info): the
/// fields against the image, the headers, computed once per original whichever
/// route asks first, kept across a restart, one download shared with `/thumbnail`.
@Suite(.serialized) struct InfoHTTPTests {
    static func encoded(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }

    static func object(_ body: [UInt8]) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }

    static func stats(_ daemon: EndToEndTests.TestDaemon) -> [String: Any] {
        object(daemon.get("/stats").body)["info"] as? [String: Any] ?? [:]
    }

    /// Checks an `/info` object against the source's own header and bytes, and its
    /// ThumbHash against the image: the reference format's decoder gives its aspect
    /// ratio, alpha flag and average colour back.
    static func expectFacts(_ info: [String: Any], of source: [UInt8], url: String?, hasAlpha: Bool,
                            sourceLocation: SourceLocation = #_sourceLocation) throws {
        let header = try ThumbnailPipeline.probe(source: source, limits: PipelineLimits())
        #expect(info["url"] as? String == url, sourceLocation: sourceLocation)
        #expect(info["format"] as? String == header.format.rawValue, sourceLocation: sourceLocation)
        #expect(info["width"] as? Int == header.displayedWidth && info["height"] as? Int == header.displayedHeight,
                sourceLocation: sourceLocation)
        #expect(info["bytes"] as? Int == source.count, sourceLocation: sourceLocation)
        #expect(info["hasAlpha"] as? Bool == hasAlpha, sourceLocation: sourceLocation)
        let hash = try #require((info["thumbhash"] as? String).flatMap { Data(base64Encoded: $0) }.map(Array.init),
                                sourceLocation: sourceLocation)
        #expect(hash.count >= 17 && hash.count <= 25 && (hash[2] & 0x80 != 0) == hasAlpha, sourceLocation: sourceLocation)
        let ratio = try #require(ThumbHash.approximateAspectRatio(hash), sourceLocation: sourceLocation)
        let actual = Double(header.displayedWidth) / Double(header.displayedHeight)
        // The short side's count is round(7·short/long) (5 with alpha): within half a step.
        let step = hasAlpha ? 5.0 : 7.0
        let approx = min(ratio, 1 / ratio), exact = min(actual, 1 / actual)
        #expect(abs(approx - exact) <= 0.5 / step + 1e-9 || (approx == 1 / step && exact < 1.5 / step),
                "aspect \(ratio) vs \(actual)", sourceLocation: sourceLocation)
        // The hash's DC terms are the alpha-weighted sRGB mean (6 bits a channel): against a
        // whole decode of the source, within quantisation and the ≤ 100 px copy's averaging.
        let average = try #require(ThumbHash.averageRGBA(hash), sourceLocation: sourceLocation)
        let whole = try ImageDecoder.decodeBitmap(source, maxPixels: 50_000_000).bitmap
        var sums = [0.0, 0.0, 0.0], weight = 0.0
        for i in stride(from: 0, to: whole.pixels.count, by: 4) {
            let a = Double(whole.pixels[i + 3]) / 255
            for c in 0..<3 { sums[c] += a * Double(whole.pixels[i + c]) / 255 }
            weight += a
        }
        for (got, want) in zip([average.r, average.g, average.b], sums.map { weight > 0 ? $0 / weight : 0 }) {
            #expect(abs(got - want) < 0.04, "ThumbHash average \(average) vs the image's \(sums.map { $0 / weight })",
                    sourceLocation: sourceLocation)
        }
        let decoded = try #require(ThumbHash.decode(hash), sourceLocation: sourceLocation)
        #expect(max(decoded.width, decoded.height) == 32, sourceLocation: sourceLocation)
        let color = try #require(info["averageColor"] as? String, sourceLocation: sourceLocation)
        #expect(color.count == 7 && color.hasPrefix("#") && color == color.lowercased(), sourceLocation: sourceLocation)
        let focus = try #require(info["focus"] as? [String: Double], sourceLocation: sourceLocation)
        for key in ["x", "y"] {
            let value = try #require(focus[key], sourceLocation: sourceLocation)
            #expect((0...1).contains(value) && (value * 1000).rounded() == value * 1000, sourceLocation: sourceLocation)
        }
    }

    @Test func getAnswersTheFactsOnceThenFromMemoryWithItsETag() throws {
        try EndToEndTests.withDaemon { daemon, origin in
            let url = origin.url("/cat.jpg")
            let target = "/info?url=\(Self.encoded(url))"
            let first = daemon.get(target)
            #expect(first.status == 200 && first.headers["content-type"] == "application/json")
            #expect(first.headers["x-cache"] == "origin")
            #expect(first.headers["cache-control"] == "public, max-age=86400, stale-while-revalidate=3600")
            let info = Self.object(first.body)
            try Self.expectFacts(info, of: TestOrigin.jpeg, url: url, hasAlpha: false)
            #expect(info["orientation"] as? Int == 1 && info["animated"] as? Bool == false && info["frames"] as? Int == 1)
            let etag = try #require(first.headers["etag"])
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count == 34)

            let second = daemon.get(target)
            #expect(second.headers["x-cache"] == "memory" && second.body == first.body && second.headers["etag"] == etag)
            let notModified = daemon.get(target, headers: ["If-None-Match": etag])
            #expect(notModified.status == 304 && notModified.body.isEmpty)
            let head = daemon.get(target, method: "HEAD")
            #expect(head.status == 200 && head.body.isEmpty && head.headers["content-length"] == String(first.body.count))

            // The facts serve the first render too: nothing computed again, nothing downloaded.
            let thumb = daemon.get("/thumbnail?url=\(Self.encoded(url))&w=50&h=50&fit=cover&gravity=attention")
            #expect(thumb.status == 200 && thumb.headers["x-cache"] == "disk")
            let figures = Self.stats(daemon)
            #expect(figures["computed"] as? Int == 1 && figures["requests"] as? Int == 4 && figures["batchItems"] as? Int == 0)
            #expect(origin.hits("/cat.jpg") == 1)
            let metrics = String(decoding: daemon.get("/metrics").body, as: UTF8.self)
            #expect(metrics.contains("thumbd_info_requests_total 4") && metrics.contains("thumbd_info_computed_total 1"))
        }
    }

    @Test func aRenderFirstLeavesTheFactsAndARestartReadsThemFromDisk() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let dir = NSTemporaryDirectory() + "thumbd-info-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let url = Self.encoded(origin.url("/cat.jpg"))
        let body: [UInt8], etag: String?
        do {
            let daemon = try EndToEndTests.TestDaemon(store: dir)
            defer { daemon.stop() }
            // w=64 decodes at 1/8, the canonical copy at 1/2: the render answers first and
            // leaves its facts to a job behind it.
            #expect(daemon.get("/thumbnail?url=\(url)&w=64").status == 200)
            #expect(eventually { Self.stats(daemon)["computed"] as? Int == 1 }, "the first render's job computed them")
            let info = daemon.get("/info?url=\(url)")
            #expect(info.status == 200 && info.headers["x-cache"] == "disk")
            #expect(Self.stats(daemon)["computed"] as? Int == 1)
            (body, etag) = (info.body, info.headers["etag"])
        }
        let restarted = try EndToEndTests.TestDaemon(store: dir)
        defer { restarted.stop() }
        let again = restarted.get("/info?url=\(url)")
        #expect(again.status == 200 && again.headers["x-cache"] == "disk" && again.body == body && again.headers["etag"] == etag)
        #expect(Self.stats(restarted)["computed"] as? Int == 0, "read from beside the original")
        #expect(origin.hits("/cat.jpg") == 1)
    }

    @Test func infoAndThumbnailOfANewSourceShareOneDownload() throws {
        try EndToEndTests.withDaemon { daemon, origin in
            let url = Self.encoded(origin.url("/slowish.jpg"))
            let group = DispatchGroup()
            let statuses = LockedList<Int>()
            for target in ["/info?url=\(url)", "/thumbnail?url=\(url)&w=80", "/info?url=\(url)"] {
                DispatchQueue.global().async(group: group) { statuses.append(daemon.get(target).status) }
            }
            #expect(group.wait(timeout: .now() + 60) == .success)
            #expect(statuses.values == [200, 200, 200])
            #expect(origin.hits("/slowish.jpg") == 1)
            #expect(Self.stats(daemon)["computed"] as? Int == 1)
        }
    }

    /// Real files of each kind: the fields come from the pixels and the structure, not the header's flags.
    @Test(arguments: [("/formats/photo-alpha.webp", true, "webp", 1), ("/formats/animated.gif", true, "gif", 0),
                      ("/formats/photo-alpha.avif", true, "avif", 1), ("/formats/photo-irot3.avif", false, "avif", 1),
                      ("/formats/crowd_1440x960.heic", false, "heic", 1)])
    func formatsReportTheirOwnFacts(_ path: String, _ alpha: Bool, _ format: String, _ frames: Int) throws {
        try EndToEndTests.withDaemon { daemon, origin in
            let r = daemon.get("/info?url=\(Self.encoded(origin.url(path)))")
            #expect(r.status == 200, "\(path): \(String(decoding: r.body, as: UTF8.self))")
            let info = Self.object(r.body)
            let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../ThumbCodecTests/Fixtures" + path).standardized.path
            let source = try #require(FileManager.default.contents(atPath: file))
            try Self.expectFacts(info, of: [UInt8](source), url: origin.url(path), hasAlpha: alpha)
            #expect(info["format"] as? String == format && info["orientation"] as? Int == 1)
            if frames > 0 { #expect(info["frames"] as? Int == frames && info["animated"] as? Bool == false) }
        }
    }

    @Test func anEXIFOrientationIsReportedAndApplied() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../ThumbCodecTests/Fixtures/orient/orient-6.jpg").standardized.path
        let source = [UInt8](try #require(FileManager.default.contents(atPath: file)))
        let origin = try TestOrigin(extraRoutes: ["/o6.jpg": source])
        defer { origin.stop() }
        let dir = NSTemporaryDirectory() + "thumbd-info-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let daemon = try EndToEndTests.TestDaemon(store: dir)
        defer { daemon.stop() }
        let info = Self.object(daemon.get("/info?url=\(Self.encoded(origin.url("/o6.jpg")))").body)
        try Self.expectFacts(info, of: source, url: origin.url("/o6.jpg"), hasAlpha: false)
        let header = try ThumbnailPipeline.probe(source: source, limits: PipelineLimits())
        #expect(info["orientation"] as? Int == 6 && header.width != header.height)
        #expect(info["width"] as? Int == header.height, "the oriented size")
    }

    @Test func errorsAreThoseOfThumbnail() throws {
        try EndToEndTests.withDaemon { daemon, origin in
            let cases: [(String, Int, String)] = [
                ("/info", 400, "bad_request"), ("/info?url=", 400, "bad_request"),
                ("/info?url=\(Self.encoded(origin.url("/cat.jpg")))&w=10", 400, "bad_request"),
                ("/info?url=ftp%3A%2F%2F127.0.0.1%2Fa.jpg", 400, "bad_request"),
                ("/info?url=\(Self.encoded(origin.url("/missing.jpg")))", 404, "source_not_found"),
                ("/info?url=\(Self.encoded(origin.url("/text.txt")))", 415, "unsupported_format"),
                ("/info?url=\(Self.encoded(origin.url("/truncated.jpg")))", 422, "corrupt_image"),
            ]
            for (target, status, code) in cases {
                let r = daemon.get(target)
                #expect(r.status == status && Self.object(r.body)["error"] as? String == code,
                        "\(target): \(r.status) \(String(decoding: r.body, as: UTF8.self))")
                let lasting = status == 404 || status == 415 || status == 422
                #expect(r.headers["cache-control"] == (lasting ? "public, max-age=10" : "no-store"), "\(target)")
            }
            #expect(daemon.get("/info?url=x", method: "DELETE").headers["allow"] == "GET, HEAD, POST")
        }
    }

    @Test func aSigningKeyGuardsGetInfo() throws {
        try EndToEndTests.withDaemon({ $0.security.signingKey = "secret" }) { daemon, origin in
            let part = "/info?url=\(Self.encoded(origin.url("/cat.jpg")))"
            #expect(daemon.get(part).status == 403)
            #expect(daemon.get(part + "&sig=AAAA").status == 403)
            #expect(daemon.get(part + "&sig=" + URLSignature.sign(part, key: "secret")).status == 200)
            #expect(origin.hits("/cat.jpg") == 1)
        }
    }
}

extension InfoHTTPTests {
    /// `GET /info`'s shortcut (a spelling seen before skips the signature and the parsing):
    /// a reload, a narrowed allowlist, a purge and `If-None-Match` still hold on it.
    @Test func theShortcutKeepsEveryRule() throws {
        try EndToEndTests.withDaemon({ $0.security.signingKey = "old" }) { daemon, origin in
            let part = "/info?url=\(Self.encoded(origin.url("/cat.jpg")))"
            let target = part + "&sig=" + URLSignature.sign(part, key: "old")
            let first = daemon.get(target)
            #expect(first.headers["x-cache"] == "origin")
            let hit = daemon.get(target)
            #expect(hit.headers["x-cache"] == "memory" && hit.body == first.body)
            #expect(daemon.get(target, headers: ["If-None-Match": first.headers["etag"] ?? "-"]).status == 304)
            #expect(daemon.daemon.handler.infoShortcuts.count == 1)

            var c = daemon.daemon.configuration
            c.security.signingKey = "new"
            _ = daemon.daemon.reload(c)
            #expect(daemon.get(target).status == 403, "the old signature, refused after the reload")
            let resigned = part + "&sig=" + URLSignature.sign(part, key: "new")
            #expect(daemon.get(resigned).headers["x-cache"] == "memory")
            #expect(daemon.get(resigned).headers["x-cache"] == "memory", "through the new shortcut")

            c.service.origin.allowedHosts = ["example.com"]
            _ = daemon.daemon.reload(c)
            #expect(daemon.get(resigned).status == 403, "a host no longer allowed")
            c.service.origin.allowedHosts = []
            _ = daemon.daemon.reload(c)
            #expect(daemon.get(resigned).headers["x-cache"] == "memory")
            _ = daemon.get("/cache?url=\(Self.encoded(origin.url("/cat.jpg")))", method: "DELETE")
            let again = daemon.get(resigned)
            #expect(again.status == 200 && again.headers["x-cache"] == "origin", "purged: fetched and computed again")
            #expect(again.headers["etag"] == first.headers["etag"], "the same bytes, the same tag")
        }
    }
}

/// A list filled from several threads.
final class LockedList<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [T] = []
    func append(_ item: T) { lock.withLock { items.append(item) } }
    var values: [T] { lock.withLock { items } }
}
