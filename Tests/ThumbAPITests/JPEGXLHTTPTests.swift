import Foundation
import Testing
import ThumbCodec
@testable import ThumbAPI
@testable import ThumbService
import ThumbImaging
import ThumbJSON
import ThumbTestSupport

/// JPEG XL through the real daemon, its sandboxed render workers and a
/// loopback origin (API.md § Output formats, § Formats read, § `format=auto`):
/// `format=jxl` checked by libjxl's own `djxl`, negotiation with the `Accept`
/// headers browsers send, the cache key and ETag, `limits.jpegXLSources`,
/// sources of every colour kind, and hostile codestreams. No worker may be
/// killed by its seccomp filter on the way (`render.crashed` stays 0).
@Suite(.serialized) struct JPEGXLHTTPTests {
    /// Chromium 156's `Accept` for an `<img>` (Debian's build, as sent).
    static let chromium = "image/jxl,image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"
    /// Safari 17's (macOS 14 / iOS 17): JPEG XL listed after WebP and AVIF.
    static let safari = "image/webp,image/avif,image/jxl,image/heic,image/heic-sequence,video/*;q=0.8,image/png,"
        + "image/svg+xml,image/*;q=0.8,*/*;q=0.5"

    static func fixture(_ name: String) throws -> [UInt8] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../ThumbCodecTests/Fixtures/" + name).standardized
        return [UInt8](try Data(contentsOf: url))
    }

    /// The JPEG XL fixtures of Fixtures/SOURCES.md § JPEG XL, served at `/NAME`.
    static let sources = ["photo.jxl", "photo-container.jxl", "orient-6.jxl", "gray.jxl", "rgb-lossless.jxl", "rgba.jxl",
                          "p3-icc-lossless.jxl", "p3-lossy.jxl", "anim3.jxl"]

    /// A bare codestream whose SizeHeader claims 100 000 × 100 000, then
    /// default metadata and nothing else (JPEG XL packs bits LSB first).
    static func hugeHeader() -> [UInt8] {
        var bytes: [UInt8] = [], used = 8
        func put(_ value: Int, _ count: Int) {
            for i in 0..<count {
                if used == 8 { bytes.append(0); used = 0 }
                bytes[bytes.count - 1] |= UInt8((value >> i) & 1) << used
                used += 1
            }
        }
        put(0, 1); put(2, 2); put(99_999, 18); put(0, 3); put(2, 2); put(99_999, 18); put(1, 1); put(1, 1)
        return [0xFF, 0x0A] + bytes + [UInt8](repeating: 0, count: 16)
    }

    private func withDaemon(_ change: (inout DaemonConfiguration) -> Void = { _ in },
                            _ body: (EndToEndTests.TestDaemon, TestOrigin) throws -> Void) throws {
        var routes: [String: [UInt8]] = [:]
        for name in Self.sources { routes["/" + name] = try Self.fixture("jxl/" + name) }
        let photo = try Self.fixture("jxl/photo.jxl")
        routes["/again.jxl"] = photo
        routes["/truncated.jxl"] = Array(photo[..<(photo.count / 2)])
        routes["/huge.jxl"] = Self.hugeHeader()
        routes["/squares.gif"] = try Self.fixture("animation/rotating-squares.gif")
        let origin = try TestOrigin(extraRoutes: routes)
        defer { origin.stop() }
        let dir = NSTemporaryDirectory() + "thumbd-jxl-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let daemon = try EndToEndTests.TestDaemon(store: dir, change: change)
        defer { daemon.stop() }
        try body(daemon, origin)
        #expect(Self.renderFigure(daemon, "crashed") == 0, "a worker died (the seccomp filter, or a crash)")
        #expect(Self.renderFigure(daemon, "killed") == 0)
    }

    /// `/stats` `render.FIELD`.
    static func renderFigure(_ daemon: EndToEndTests.TestDaemon, _ field: String) -> Int? {
        guard case .object(let top)? = try? JSONParser.parse(daemon.get("/stats").body),
              case .object(let render)? = top.first(where: { $0.key == "render" })?.value,
              case .integer(let value)? = render.first(where: { $0.key == field })?.value else { return nil }
        return value
    }

    private func target(_ origin: TestOrigin, _ path: String, _ extra: String) -> String {
        "/thumbnail?url=" + origin.url(path).addingPercentEncoding(withAllowedCharacters: .alphanumerics)! + "&" + extra
    }

    private func info(_ daemon: EndToEndTests.TestDaemon, _ origin: TestOrigin, _ path: String)
        -> (status: Int, object: [String: Any]) {
        let r = daemon.get("/info?url=" + origin.url(path).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
        return (r.status, (try? JSONSerialization.jsonObject(with: Data(r.body))) as? [String: Any] ?? [:])
    }

    /// `djxl` (libjxl-tools 0.7, one thread) decodes `jxl` to a PNG, read
    /// back by thumbd's PNG decoder (its ICC profile, if any, converted to sRGB).
    private static func png(_ bytes: [UInt8]) throws -> Bitmap {
        try ImageDecoder.decodeBitmap(bytes, maxPixels: 1 << 24).bitmap
    }

    @Test func formatJXLIsAJPEGXLThatDjxlDecodesAsThePNGAnswerLooks() throws {
        try withDaemon { daemon, origin in
            let jxl = daemon.get(target(origin, "/cat.jpg", "w=100&format=jxl"))
            #expect(jxl.status == 200 && jxl.headers["content-type"] == "image/jxl" && jxl.headers["vary"] == nil)
            #expect(jxl.headers["x-image-width"] == "100" && jxl.headers["x-image-height"] == "67")
            #expect(Array(jxl.body.prefix(2)) == [0xFF, 0x0A], "a bare codestream")
            #expect(jxl.headers["content-length"] == String(jxl.body.count) && jxl.headers["etag"] != nil)
            let png = daemon.get(target(origin, "/cat.jpg", "w=100&format=png"))
            #expect(png.status == 200 && png.headers["content-type"] == "image/png")
            let reference = try Self.png(png.body)
            let decoded = try Djxl.decode(jxl.body)
            try #require(decoded.width == 100 && decoded.height == 67)
            #expect(decoded.isOpaque)
            let psnr = PSNR.premultiplied(decoded, reference)
            #expect(psnr >= 32, "djxl's decode of the q 80 answer against the PNG answer: \(psnr) dB")
            // A lower q gives fewer bytes, and another key.
            let low = daemon.get(target(origin, "/cat.jpg", "w=100&format=jxl&q=30"))
            #expect(low.status == 200 && low.body.count < jxl.body.count && low.headers["etag"] != jxl.headers["etag"])
            // From memory the second time; HEAD and If-None-Match as for every format.
            let again = daemon.get(target(origin, "/cat.jpg", "w=100&format=jxl"))
            #expect(again.headers["x-cache"] == "memory" && again.body == jxl.body && again.headers["etag"] == jxl.headers["etag"])
            #expect(daemon.get(target(origin, "/cat.jpg", "w=100&format=jxl"),
                               headers: ["If-None-Match": jxl.headers["etag"] ?? "-"]).status == 304)
        }
    }

    @Test func translucencyIsKeptInJXL() throws {
        try withDaemon({ $0.service.limits.jpegXLSources = true }) { daemon, origin in
            let jxl = daemon.get(target(origin, "/rgba.jxl", "w=80&format=jxl"))
            let png = daemon.get(target(origin, "/rgba.jxl", "w=80&format=png"))
            #expect(jxl.status == 200 && png.status == 200)
            let decoded = try Djxl.decode(jxl.body), reference = try Self.png(png.body)
            try #require(decoded.width == reference.width && decoded.height == reference.height)
            #expect(!decoded.isOpaque)
            #expect(PSNR.premultiplied(decoded, reference) >= 30)
        }
    }

    /// Chromium lists `image/jxl` first; Safari lists it after WebP and
    /// AVIF. The server's `output.autoFormats` order decides, never the
    /// client's; `Vary: Accept` on every `auto` answer.
    @Test func negotiationWithTheBrowsersAcceptHeaders() throws {
        try withDaemon({ $0.service.output.autoFormats = [.jxl, .avif, .webp] }) { daemon, origin in
            for accept in [Self.chromium, Self.safari] {
                let r = daemon.get(target(origin, "/cat.jpg", "w=64"), headers: ["Accept": accept])
                #expect(r.status == 200 && r.headers["content-type"] == "image/jxl" && r.headers["vary"] == "Accept")
                #expect(Array(r.body.prefix(2)) == [0xFF, 0x0A])
            }
            // Without image/jxl, the next entry the client lists.
            let firefox = daemon.get(target(origin, "/cat.jpg", "w=64"),
                                     headers: ["Accept": "image/avif,image/webp,*/*"])
            #expect(firefox.headers["content-type"] == "image/avif" && firefox.headers["vary"] == "Accept")
            let old = daemon.get(target(origin, "/cat.jpg", "w=64"), headers: ["Accept": "image/jxl;q=0,image/webp,*/*"])
            #expect(old.headers["content-type"] == "image/webp")
        }
        // The default autoFormats (["jxl", "webp"]): Chromium and Safari get JPEG XL, Firefox WebP.
        try withDaemon { daemon, origin in
            let r = daemon.get(target(origin, "/cat.jpg", "w=64"), headers: ["Accept": Self.chromium])
            #expect(r.headers["content-type"] == "image/jxl" && r.headers["vary"] == "Accept")
            let safari = daemon.get(target(origin, "/cat.jpg", "w=64"), headers: ["Accept": Self.safari])
            #expect(safari.headers["content-type"] == "image/jxl" && safari.headers["vary"] == "Accept")
            let firefox = daemon.get(target(origin, "/cat.jpg", "w=64"), headers: ["Accept": "image/avif,image/webp,*/*"])
            #expect(firefox.headers["content-type"] == "image/webp" && firefox.headers["vary"] == "Accept")
        }
        try withDaemon({ $0.service.output.autoFormats = [.avif, .jxl] }) { daemon, origin in
            #expect(daemon.get(target(origin, "/cat.jpg", "w=64"),
                               headers: ["Accept": Self.chromium]).headers["content-type"] == "image/avif")
        }
    }

    /// `format=auto` negotiated to JPEG XL and `format=jxl` are one entry
    /// and one ETag; AVIF and WebP are others.
    @Test func negotiatedJXLSharesTheKeyOfFormatJXLAndNotAVIFs() throws {
        try withDaemon({ $0.service.output.autoFormats = [.jxl, .avif, .webp] }) { daemon, origin in
            let explicit = daemon.get(target(origin, "/cat.jpg", "w=64&format=jxl"))
            #expect(explicit.status == 200 && explicit.headers["x-cache"] == "origin" && explicit.headers["vary"] == nil)
            let negotiated = daemon.get(target(origin, "/cat.jpg", "w=64"), headers: ["Accept": Self.chromium])
            #expect(negotiated.headers["x-cache"] == "memory" && negotiated.body == explicit.body)
            #expect(negotiated.headers["etag"] == explicit.headers["etag"])
            let etag = try #require(explicit.headers["etag"])
            let conditional = daemon.get(target(origin, "/cat.jpg", "w=64"),
                                         headers: ["Accept": Self.chromium, "If-None-Match": etag])
            #expect(conditional.status == 304 && conditional.headers["vary"] == "Accept")
            let avif = daemon.get(target(origin, "/cat.jpg", "w=64"), headers: ["Accept": "image/avif,image/webp"])
            let webp = daemon.get(target(origin, "/cat.jpg", "w=64"), headers: ["Accept": "image/webp"])
            #expect(avif.headers["content-type"] == "image/avif" && webp.headers["content-type"] == "image/webp")
            #expect(Set([etag, avif.headers["etag"] ?? "", webp.headers["etag"] ?? ""]).count == 3)
            // The JPEG XL ETag does not answer a client that negotiates AVIF.
            #expect(daemon.get(target(origin, "/cat.jpg", "w=64"),
                               headers: ["Accept": "image/avif", "If-None-Match": etag]).status == 200)
            // bg is inert for jxl without contain: the same entry.
            let bg = daemon.get(target(origin, "/cat.jpg", "w=64&format=jxl&bg=ff0000"))
            #expect(bg.headers["etag"] == etag && bg.headers["x-cache"] == "memory")
        }
    }

    /// API.md § `format=auto`: an animated GIF or WebP stays animated in
    /// WebP when the client lists it, whatever autoFormats prefers; a still
    /// source, and an explicit format, do not change.
    @Test func animatedSourcesStayWebPUnderNegotiation() throws {
        try withDaemon({ $0.service.output.autoFormats = [.jxl, .avif, .webp] }) { daemon, origin in
            let animated = daemon.get(target(origin, "/squares.gif", "w=48"), headers: ["Accept": Self.chromium])
            #expect(animated.status == 200 && animated.headers["content-type"] == "image/webp")
            #expect(animated.headers["x-image-frames"] != nil && animated.headers["vary"] == "Accept")
            let webp = daemon.get(target(origin, "/squares.gif", "w=48&format=webp"))
            #expect(webp.headers["etag"] == animated.headers["etag"] && webp.headers["x-cache"] == "memory")
            // Explicit JPEG XL: the first frame, a still, under its own key.
            let still = daemon.get(target(origin, "/squares.gif", "w=48&format=jxl"))
            #expect(still.status == 200 && still.headers["content-type"] == "image/jxl" && still.headers["x-image-frames"] == nil)
            // Negotiated again, after the still is in memory: the animation, from memory.
            let again = daemon.get(target(origin, "/squares.gif", "w=48"), headers: ["Accept": Self.chromium])
            #expect(again.headers["content-type"] == "image/webp" && again.headers["x-cache"] == "memory")
            #expect(again.body == animated.body)
            // A client that lists JPEG XL but not WebP gets the still; animated=0 too.
            let noWebP = daemon.get(target(origin, "/squares.gif", "w=48"), headers: ["Accept": "image/jxl"])
            #expect(noWebP.headers["content-type"] == "image/jxl" && noWebP.headers["etag"] == still.headers["etag"])
            let first = daemon.get(target(origin, "/squares.gif", "w=48&animated=0"), headers: ["Accept": Self.chromium])
            #expect(first.headers["content-type"] == "image/jxl" && first.headers["x-image-frames"] == nil)
            // WebP outside autoFormats keeps an animation animated too, over the PNG/JPEG rule.
            let avifOnly = daemon.get(target(origin, "/squares.gif", "w=40"), headers: ["Accept": "image/webp"])
            #expect(avifOnly.headers["content-type"] == "image/webp" && avifOnly.headers["x-image-frames"] != nil)
            // A still source negotiates as before.
            let photo = daemon.get(target(origin, "/cat.jpg", "w=48"), headers: ["Accept": Self.chromium])
            #expect(photo.headers["content-type"] == "image/jxl")
        }
    }

    /// `limits.jpegXLSources` false (the default): a JPEG XL source is 415,
    /// to `/thumbnail` and `/info` alike; true (after a reload too) reads it.
    @Test func jpegXLSourcesOnlyWhenTheOperatorOptsIn() throws {
        try withDaemon { daemon, origin in
            let refused = daemon.get(target(origin, "/photo.jxl", "w=64"))
            #expect(refused.status == 415 && String(decoding: refused.body, as: UTF8.self).contains("unsupported_format"))
            #expect(info(daemon, origin, "/photo-container.jxl").status == 415)

            var c = daemon.daemon.configuration
            c.service.limits.jpegXLSources = true
            _ = daemon.daemon.reload(c)
            // (/photo.jxl's 415 is remembered for origin.negativeCacheSeconds; the same bytes elsewhere are read.)
            let read = daemon.get(target(origin, "/again.jxl", "w=64&format=png"))
            #expect(read.status == 200 && read.headers["x-image-width"] == "64")
            c.service.limits.jpegXLSources = false
            _ = daemon.daemon.reload(c)
            #expect(daemon.get(target(origin, "/rgba.jxl", "w=64")).status == 415)
        }
    }

    /// `/info` of JPEG XL sources: `format: "jxl"`, the codestream's
    /// orientation, frames counted, and an animation `animated`.
    @Test func infoOfJPEGXLSources() throws {
        try withDaemon({ $0.service.limits.jpegXLSources = true }) { daemon, origin in
            let photo = info(daemon, origin, "/photo.jxl")
            #expect(photo.status == 200 && photo.object["format"] as? String == "jxl")
            #expect(photo.object["width"] as? Int == 160 && photo.object["height"] as? Int == 107)
            #expect(photo.object["frames"] as? Int == 1 && photo.object["animated"] as? Bool == false)
            #expect(photo.object["hasAlpha"] as? Bool == false)
            let six = info(daemon, origin, "/orient-6.jxl")
            #expect(six.object["orientation"] as? Int == 6 && six.object["width"] as? Int == 32
                        && six.object["height"] as? Int == 24)
            let anim = info(daemon, origin, "/anim3.jxl")
            #expect(anim.object["frames"] as? Int == 3 && anim.object["animated"] as? Bool == true)
            #expect(info(daemon, origin, "/rgba.jxl").object["hasAlpha"] as? Bool == true)
            // An animated JPEG XL gives its first frame in every format, WebP too.
            let webp = daemon.get(target(origin, "/anim3.jxl", "w=16&format=webp"))
            #expect(webp.status == 200 && webp.headers["x-image-frames"] == nil)
        }
    }

    /// Each colour kind, rendered at its own size as PNG by thumbd's JPEG XL
    /// path, against djxl's decode of the same file (a PNG, its ICC profile
    /// converted by thumbd's PNG path): the same sRGB pixels.
    @Test(arguments: JPEGXLHTTPTests.sources)
    func everyColourKindReadsAsDjxlDecodesIt(_ name: String) throws {
        try withDaemon({ $0.service.limits.jpegXLSources = true }) { daemon, origin in
            let r = daemon.get(target(origin, "/" + name, "w=4096&h=4096&format=png"))
            try #require(r.status == 200, "\(name): \(String(decoding: r.body, as: UTF8.self))")
            let answer = try Self.png(r.body)
            let reference = try Djxl.decode(try Self.fixture("jxl/" + name))
            try #require(answer.width == reference.width && answer.height == reference.height, "\(name)")
            let psnr = PSNR.premultiplied(answer, reference)
            let lossless = name.contains("lossless")
            #expect(psnr >= (lossless ? 45 : 38), "\(name): \(psnr) dB")
            #expect(answer.isOpaque == reference.isOpaque, "\(name)")
        }
    }

    /// SPEC §6: a header claiming 100 000² is `422 image_too_large` before
    /// any pixel; a codestream cut in its frame is `422 corrupt_image`.
    @Test func hostileCodestreams() throws {
        try withDaemon({ $0.service.limits.jpegXLSources = true }) { daemon, origin in
            let huge = daemon.get(target(origin, "/huge.jxl", "w=64"))
            #expect(huge.status == 422 && String(decoding: huge.body, as: UTF8.self).contains("image_too_large"))
            #expect(info(daemon, origin, "/huge.jxl").status == 422)
            let cut = daemon.get(target(origin, "/truncated.jxl", "w=64"))
            #expect(cut.status == 422 && String(decoding: cut.body, as: UTF8.self).contains("corrupt_image"))
            // The daemon and its workers carry on.
            #expect(daemon.get(target(origin, "/photo.jxl", "w=64&format=jxl")).status == 200)
        }
    }
}

/// The configuration keys of JPEG XL (Configuration.md): `limits.jpegXLSources`
/// and `jxl` in `output.autoFormats`, read, defaulted, refused and printed.
struct JPEGXLConfigurationTests {
    @Test func keysAreReadAndPrinted() throws {
        let defaults = try DaemonConfiguration.parse(Array("{}".utf8))
        #expect(!defaults.service.limits.jpegXLSources && defaults.service.output.autoFormats == [.jxl, .webp])
        let c = try DaemonConfiguration.parse(Array("""
            {"limits": {"jpegXLSources": true}, "output": {"autoFormats": ["jxl", "avif", "webp"]}}
            """.utf8))
        #expect(c.service.limits.jpegXLSources && c.service.output.autoFormats == [.jxl, .avif, .webp])
        let printed = c.json.serialized(indent: 2)
        #expect(printed.contains("\"jpegXLSources\": true") && printed.contains("\"jxl\""))
        #expect(try DaemonConfiguration.parse(Array(c.json.serialized(indent: 2).utf8)) == c)
        let preset = try DaemonConfiguration.parse(Array(#"{"output": {"presets": {"p": {"w": 64, "format": "jxl"}}}}"#.utf8))
        #expect(preset.service.output.presets["p"]?.format == .jxl)
    }

    @Test(arguments: [
        (#"{"limits": {"jpegXLSources": 1}}"#, "limits.jpegXLSources"),
        (#"{"output": {"autoFormats": ["jxl", "jxl"]}}"#, "output.autoFormats"),
        (#"{"output": {"autoFormats": ["png"]}}"#, "output.autoFormats"),
    ])
    func badValuesNameTheirKey(_ text: String, _ key: String) {
        #expect { try DaemonConfiguration.parse(Array(text.utf8)) } throws: { error in
            (error as? ConfigurationError)?.key == key
        }
    }

    @Test func formatJXLInTheQueryAndInAPrefetchItem() throws {
        let config = ServiceConfiguration()
        let request = try ThumbnailRequest(query: [("url", "https://cdn.example/a.png"), ("w", "10"), ("format", "jxl")],
                                           config: config, accept: "image/webp")
        #expect(request.variant.format == .jxl && !request.variesByAccept && request.animationVariant == nil)
        #expect(request.variant.canonicalKey.contains("format=jxl&q="))
        let batch = try PrefetchBatch(body: Array(#"{"items": [{"url": "https://cdn.example/a.png", "w": 10, "format": "jxl"}]}"#.utf8),
                                      config: config)
        #expect(batch.items.map(\.variant) == [request.variant])
    }
}
