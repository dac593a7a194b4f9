import Foundation
import Testing
@testable import ThumbAPI
import ThumbRender
@testable import ThumbService
import ThumbTestSupport

/// `format=auto` by `Accept`, `dpr`, and what they do to the cache key.
struct NegotiationTests {
    private func request(_ pairs: [(String, String)], accept: String? = nil,
                         _ change: (inout ServiceConfiguration) -> Void = { _ in }) throws -> ThumbnailRequest {
        var config = ServiceConfiguration()
        change(&config)
        return try ThumbnailRequest(query: [("url", "https://cdn.example/a.jpg")] + pairs.map { (name: $0.0, value: $0.1) },
                                    config: config, accept: accept)
    }

    @Test func theFirstAutoFormatTheClientListsWins() {
        let both: [OutputFormat] = [.avif, .webp]
        #expect(AcceptNegotiation.choose(from: [.webp], accept: "image/avif,image/webp,*/*;q=0.8") == .webp)
        #expect(AcceptNegotiation.choose(from: both, accept: "image/avif,image/webp,*/*;q=0.8") == .avif)
        #expect(AcceptNegotiation.choose(from: both, accept: "image/webp") == .webp)
        #expect(AcceptNegotiation.choose(from: both, accept: " Image/WebP ; q=0.5 ") == .webp, "case and spaces")
        #expect(AcceptNegotiation.choose(from: [], accept: "image/webp") == nil)
        #expect(AcceptNegotiation.choose(from: both, accept: nil) == nil)
    }

    @Test func wildcardsAndQZeroDoNotCount() {
        let both: [OutputFormat] = [.avif, .webp]
        #expect(AcceptNegotiation.choose(from: both, accept: "*/*") == nil)
        #expect(AcceptNegotiation.choose(from: both, accept: "image/*") == nil)
        #expect(AcceptNegotiation.choose(from: both, accept: "image/avif;q=0, image/webp") == .webp)
        #expect(AcceptNegotiation.choose(from: both, accept: "image/avif;q=0.000,image/webp;Q=0") == nil)
        #expect(AcceptNegotiation.choose(from: both, accept: "image/avif;level=1;q=0.001") == .avif)
        #expect(AcceptNegotiation.choose(from: both, accept: "image/png,image/jpeg") == nil)
    }

    /// RFC 9110 §12.4.2: a weight is `0`…`1` with at most three decimals;
    /// any other makes its member not acceptable (it used to count as acceptable).
    @Test(arguments: ["q=abc", "q=", "q=1.5", "q=2", "q=-1", "q=0.0001", "q=1.001", "q=.5", "q=0,5", "q=0x1", "q=1e0",
                      "q=0.5x", "q=+1", "q=inf", "q=nan"])
    func aMalformedWeightIsNotAcceptable(_ weight: String) {
        #expect(AcceptNegotiation.choose(from: [.avif, .webp], accept: "image/avif;\(weight), image/png") == nil,
                "\(weight)")
        #expect(AcceptNegotiation.choose(from: [.avif, .webp], accept: "image/avif;\(weight),image/webp") == .webp)
    }

    @Test(arguments: [("q=1", 1000), ("q=1.", 1000), ("q=1.000", 1000), ("Q=0.5", 500), ("q=0.001", 1), ("q=0", 0),
                      ("q=0.", 0), ("q=0.10", 100), (" q=0.7 ", 700)])
    func wellFormedWeights(_ parameter: String, _ thousandths: Int) {
        let value = parameter.split(separator: "=", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces)
        #expect(AcceptNegotiation.qvalue(Substring(value)) == thousandths, "\(parameter)")
        let chosen = AcceptNegotiation.choose(from: [.webp], accept: "image/webp;\(parameter)")
        #expect(chosen == (thousandths > 0 ? .webp : nil), "\(parameter)")
    }

    @Test func theFirstWeightCountsLaterQParametersAreExtensions() {
        #expect(AcceptNegotiation.choose(from: [.webp], accept: "image/webp;q=0.5;q=0") == .webp)
        #expect(AcceptNegotiation.choose(from: [.webp], accept: "image/webp;q=0;q=1") == nil)
    }

    @Test func autoNegotiatedSharesTheKeyOfTheExplicitFormat() throws {
        let negotiated = try request([("w", "64")], accept: "image/webp")
        let explicit = try request([("w", "64"), ("format", "webp")], accept: "image/webp")
        #expect(negotiated.variant.format == .webp)
        #expect(negotiated == explicit && negotiated.hashValue == explicit.hashValue)
        #expect(negotiated.variant.canonicalKey == explicit.variant.canonicalKey)
        #expect(negotiated.variesByAccept && !explicit.variesByAccept)
        // Without a listed format, auto is the PNG/JPEG rule, still varying by Accept.
        let rule = try request([("w", "64")], accept: "*/*")
        #expect(rule.variant.format == .auto && rule.variesByAccept)
        // autoFormats [] turns negotiation and Vary off.
        let off = try request([("w", "64")], accept: "image/webp") { $0.output.autoFormats = [] }
        #expect(off.variant.format == .auto && !off.variesByAccept)
        // A preset's auto format negotiates too.
        let preset = try request([("preset", "p")], accept: "image/webp") {
            $0.output.presets["p"] = ServiceConfiguration.Preset(width: 10, height: nil, fit: nil, format: .auto, quality: nil)
        }
        #expect(preset.variant.format == .webp && preset.variesByAccept)
    }

    @Test func dprMultipliesTheBoxAfterTheAllowedSizesCheck() throws {
        let doubled = try request([("w", "256"), ("dpr", "2")])
        #expect(doubled == (try request([("w", "512")])))
        let box = try request([("w", "256"), ("h", "256"), ("fit", "cover"), ("dpr", "3")]) {
            $0.output.allowedSizes = [ServiceConfiguration.Size(width: 256, height: 256)]
        }
        #expect(box.variant.prepared.width == 768 && box.variant.prepared.height == 768)
        let fromPreset = try request([("preset", "p"), ("dpr", "2")]) {
            $0.output.presets["p"] = ServiceConfiguration.Preset(width: 100, height: 50, fit: .cover, format: nil, quality: nil)
        }
        #expect(fromPreset.variant.prepared.width == 200 && fromPreset.variant.prepared.height == 100)
    }

    @Test(arguments: ["0", "5", "1.5", "2.0", "02", " 2", "+2", "-1", "x", ""])
    func dprIsOneDigitFromOneToFour(_ value: String) {
        #expect(throws: ServiceError.self) { try request([("w", "10"), ("dpr", value)]) }
    }

    @Test func dprPastMaxOutputDimensionIs400BeforeAnyFetch() throws {
        #expect(throws: ServiceError.self) { try request([("w", "3000"), ("dpr", "2")]) }
        #expect(throws: ServiceError.self) { try request([("h", "1025"), ("dpr", "4")]) }
        #expect(try request([("h", "1024"), ("dpr", "4")]).variant.prepared.height == 4096)
    }
}

/// Over HTTP: `Vary` and `Cache-Control` on answers and errors.
@Suite(.serialized) struct CacheHeaderTests {
    typealias TestDaemon = EndToEndTests.TestDaemon

    private func withDaemon(_ change: (inout DaemonConfiguration) -> Void = { _ in },
                            _ body: (TestDaemon, TestOrigin) throws -> Void) throws {
        try EndToEndTests.withDaemon(change, body)
    }

    private func target(_ origin: TestOrigin, _ path: String, _ extra: String = "") -> String {
        let url = origin.url(path).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        return "/thumbnail?url=\(url)&w=40" + extra
    }

    @Test func varyAcceptExactlyWhenTheFormatIsNegotiated() throws {
        try withDaemon { daemon, origin in
            let auto = daemon.get(target(origin, "/cat.jpg"), headers: ["Accept": "image/png"])
            #expect(auto.status == 200 && auto.headers["vary"] == "Accept" && auto.headers["content-type"] == "image/jpeg")
            let etag = try #require(auto.headers["etag"])
            let notModified = daemon.get(target(origin, "/cat.jpg"), headers: ["Accept": "image/png", "If-None-Match": etag])
            #expect(notModified.status == 304 && notModified.headers["vary"] == "Accept")
            #expect(notModified.headers["x-image-width"] == nil && notModified.headers["cache-control"] != nil)
            let explicit = daemon.get(target(origin, "/cat.jpg", "&format=jpeg"))
            #expect(explicit.status == 200 && explicit.headers["vary"] == nil)
            let missing = daemon.get(target(origin, "/missing.jpg"))
            #expect(missing.status == 404 && missing.headers["vary"] == "Accept")
            let badQuery = daemon.get(target(origin, "/cat.jpg", "&dpr=9"))
            #expect(badQuery.status == 400 && badQuery.headers["vary"] == nil)
        }
        try withDaemon({ $0.service.output.autoFormats = [] }) { daemon, origin in
            let auto = daemon.get(target(origin, "/cat.jpg"))
            #expect(auto.status == 200 && auto.headers["vary"] == nil)
        }
    }

    /// RFC 9110 §5.3: two `Accept` fields are one list. The second used to
    /// be ignored, so a client listing WebP there got JPEG; and a
    /// malformed weight used to count as acceptable.
    @Test func repeatedAcceptFieldsAreOneListAndAMalformedWeightRefuses() throws {
        try withDaemon { daemon, origin in
            func exchange(_ fields: [String]) throws -> TestClient.Response {
                let client = try TestClient(port: daemon.port)   // closed by its deinit, once
                client.send("GET \(target(origin, "/cat.jpg")) HTTP/1.1\r\nHost: t\r\n"
                            + fields.map { $0 + "\r\n" }.joined() + "Connection: close\r\n\r\n")
                return try #require(client.readResponse())
            }
            let split = try exchange(["Accept: image/png", "Accept: image/webp"])
            #expect(split.status == 200 && split.headers["content-type"] == "image/webp" && split.headers["vary"] == "Accept")
            let again = try exchange(["Accept: image/png", "Accept: image/webp"])
            #expect(again.headers["x-cache"] == "memory" && again.headers["content-type"] == "image/webp", "the shortcut too")
            let first = try exchange(["Accept: image/png"])
            #expect(first.headers["content-type"] == "image/jpeg", "a different list: not the shortcut above")
            let garbage = try exchange(["Accept: image/webp;q=abc"])
            #expect(garbage.status == 200 && garbage.headers["content-type"] == "image/jpeg")
        }
    }

    @Test func lastingErrorsAreCachedBrieflyTransientOnesNever() throws {
        try withDaemon({ $0.service.output.errorMaxAgeSeconds = 7 }) { daemon, origin in
            #expect(daemon.get(target(origin, "/missing.jpg")).headers["cache-control"] == "public, max-age=7")
            let failed = daemon.get(target(origin, "/error.jpg"))
            #expect(failed.status == 502 && failed.headers["cache-control"] == "no-store")
            let bad = daemon.get(target(origin, "/cat.jpg", "&fit=nope"))
            #expect(bad.status == 400 && bad.headers["cache-control"] == "no-store")
        }
        try withDaemon({ $0.service.output.staleWhileRevalidateSeconds = 0; $0.service.output.cacheMaxAgeSeconds = 60 }) { daemon, origin in
            #expect(daemon.get(target(origin, "/cat.jpg")).headers["cache-control"] == "public, max-age=60")
        }
    }
}

/// Over HTTP: negotiated WebP and AVIF come out as such and share the explicit
/// format's entry and ETag; WebP, GIF, AVIF and HEIC sources render.
@Suite(.serialized) struct ModernFormatTests {
    typealias TestDaemon = EndToEndTests.TestDaemon

    private func withDaemon(_ change: (inout DaemonConfiguration) -> Void = { _ in },
                            _ body: (TestDaemon, TestOrigin) throws -> Void) throws {
        try EndToEndTests.withDaemon(change, body)
    }

    private func target(_ origin: TestOrigin, _ path: String, _ extra: String) -> String {
        "/thumbnail?url=" + origin.url(path).addingPercentEncoding(withAllowedCharacters: .alphanumerics)! + extra
    }

    @Test func acceptNegotiatesWebPSharingTheExplicitEntry() throws {
        try withDaemon { daemon, origin in
            let auto = daemon.get(target(origin, "/cat.jpg", "&w=64"), headers: ["Accept": "image/avif,image/webp,*/*"])
            #expect(auto.status == 200 && auto.headers["content-type"] == "image/webp" && auto.headers["vary"] == "Accept")
            #expect(Array(auto.body.prefix(4)) == Array("RIFF".utf8) && Array(auto.body[8..<12]) == Array("WEBP".utf8))
            let explicit = daemon.get(target(origin, "/cat.jpg", "&w=64&format=webp"))
            #expect(explicit.headers["x-cache"] == "memory" && explicit.headers["etag"] == auto.headers["etag"])
            #expect(explicit.body == auto.body && explicit.headers["vary"] == nil)
            let jpeg = daemon.get(target(origin, "/cat.jpg", "&w=64"), headers: ["Accept": "image/png,*/*"])
            #expect(jpeg.headers["content-type"] == "image/jpeg" && jpeg.headers["etag"] != auto.headers["etag"])
        }
    }

    @Test func avifFirstWhenConfiguredFirst() throws {
        try withDaemon({ $0.service.output.autoFormats = [.avif, .webp] }) { daemon, origin in
            let r = daemon.get(target(origin, "/cat.jpg", "&w=64&q=60"), headers: ["Accept": "image/webp, image/avif"])
            #expect(r.status == 200 && r.headers["content-type"] == "image/avif")
            #expect(r.body.count > 12 && Array(r.body[4..<12]) == Array("ftypavif".utf8))
            let webpOnly = daemon.get(target(origin, "/cat.jpg", "&w=64&q=60"), headers: ["Accept": "image/webp"])
            #expect(webpOnly.headers["content-type"] == "image/webp")
        }
    }

    @Test(arguments: [
        ("/formats/crowd_1440x960.heic", "144", "96"),
        ("/formats/Link-U-fox.profile1.8bpc.yuv444.avif", "144", "96"),
        ("/formats/lossless2.webp", "144", "44"),
        ("/formats/photo-transparent.gif", "144", "96"),
    ])
    func modernSourcesRender(_ path: String, _ width: String, _ height: String) throws {
        try withDaemon { daemon, origin in
            let r = daemon.get(target(origin, path, "&w=144&format=png"))
            #expect(r.status == 200 && r.headers["content-type"] == "image/png", "\(path): \(r.status)")
            #expect(r.headers["x-image-width"] == width, "\(path): \(String(describing: r.headers["x-image-width"]))")
            #expect(r.headers["x-image-height"] == height, "\(path): \(String(describing: r.headers["x-image-height"]))")
        }
    }
}
