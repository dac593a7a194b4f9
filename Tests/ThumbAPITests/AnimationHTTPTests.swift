import Foundation
import Testing
import ThumbTestSupport
@testable import ThumbAPI
@testable import ThumbService

/// API.md § Animation through the real daemon and its render workers: a WebP
/// answer of an animated GIF or WebP animates, with `X-Image-Frames`;
/// `animated=0`, and every other format, give the first frame;
/// `maxAnimationFrames` drops the rest; `maxAnimationPixels` is a 422 that is
/// not remembered.
@Suite(.serialized) struct AnimationHTTPTests {
    private static func fixture(_ name: String) throws -> [UInt8] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../ThumbCodecTests/Fixtures/animation/" + name).standardized
        return [UInt8](try Data(contentsOf: url))
    }

    private func target(_ origin: TestOrigin, _ path: String, _ extra: String) -> String {
        "/thumbnail?url=" + origin.url(path).addingPercentEncoding(withAllowedCharacters: .alphanumerics)! + "&" + extra
    }

    /// The frames of an animated WebP answer: its `ANMF` chunks (a still WebP has none).
    private static func frames(ofWebP bytes: [UInt8]) -> Int {
        var count = 0, at = 12
        while at + 8 <= bytes.count {
            let size = Int(bytes[at + 4]) | Int(bytes[at + 5]) << 8 | Int(bytes[at + 6]) << 16 | Int(bytes[at + 7]) << 24
            if Array(bytes[at..<at + 4]) == Array("ANMF".utf8) { count += 1 }
            at += 8 + size + (size & 1)
        }
        return count
    }

    private func withAnimations(_ change: (inout DaemonConfiguration) -> Void = { _ in },
                                _ body: (EndToEndTests.TestDaemon, TestOrigin) throws -> Void) throws {
        let origin = try TestOrigin(extraRoutes: ["/squares.gif": try Self.fixture("rotating-squares.gif"),
                                                  "/squares.webp": try Self.fixture("rotating-squares.webp")])
        defer { origin.stop() }
        let dir = NSTemporaryDirectory() + "thumbd-anim-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let daemon = try EndToEndTests.TestDaemon(store: dir, change: change)
        defer { daemon.stop() }
        try body(daemon, origin)
    }

    @Test func aWebPAnswerOfAnAnimatedSourceAnimates() throws {
        try withAnimations { daemon, origin in
            for path in ["/squares.gif", "/squares.webp"] {
                let animated = daemon.get(target(origin, path, "w=48&format=webp"))
                #expect(animated.status == 200 && animated.headers["content-type"] == "image/webp", "\(path)")
                let frames = try #require(Int(animated.headers["x-image-frames"] ?? ""), "\(path)")
                #expect(frames > 1 && Self.frames(ofWebP: animated.body) >= 2, "\(path): \(frames) frames")
                #expect(animated.headers["x-image-width"] == "48")

                // animated=0: the first frame, a still WebP, under another key.
                let still = daemon.get(target(origin, path, "w=48&format=webp&animated=0"))
                #expect(still.status == 200 && still.headers["x-image-frames"] == nil)
                #expect(Self.frames(ofWebP: still.body) == 0 && still.headers["etag"] != animated.headers["etag"])
                // Another format: the first frame, from the prepared bitmap the animation kept.
                let png = daemon.get(target(origin, path, "w=48&format=png"))
                #expect(png.status == 200 && png.headers["x-image-frames"] == nil && png.headers["x-cache"] == "memory")
                // The animation again: a memory hit, never the kept first frame encoded as a still.
                let again = daemon.get(target(origin, path, "w=48&format=webp"))
                #expect(again.headers["x-image-frames"] == animated.headers["x-image-frames"] && again.body == animated.body)
            }
            // format=auto negotiated to WebP animates too.
            let auto = daemon.get(target(origin, "/squares.gif", "w=40"), headers: ["Accept": "image/webp,*/*"])
            #expect(auto.status == 200 && auto.headers["content-type"] == "image/webp" && auto.headers["x-image-frames"] != nil)
        }
    }

    @Test func maxAnimationFramesDropsTheRest() throws {
        try withAnimations({ $0.service.limits.maxAnimationFrames = 2 }) { daemon, origin in
            let answer = daemon.get(target(origin, "/squares.gif", "w=48&format=webp"))
            #expect(answer.status == 200 && answer.headers["x-image-frames"] == "2")
        }
    }

    @Test func maxAnimationPixelsIs422AndNotRemembered() throws {
        // rotating-squares.gif is 120×120 and has more than one frame: 20 000 pixels is below two frames.
        try withAnimations({ $0.service.limits.maxAnimationPixels = 20_000 }) { daemon, origin in
            let refused = daemon.get(target(origin, "/squares.gif", "w=48&format=webp"))
            #expect(refused.status == 422)
            #expect(String(decoding: refused.body, as: UTF8.self).contains("maxAnimationPixels"))
            // Not remembered: the first frame of the same source is served.
            #expect(daemon.get(target(origin, "/squares.gif", "w=48&format=webp&animated=0")).status == 200)
            #expect(daemon.get(target(origin, "/squares.gif", "w=48&format=png")).status == 200)
        }
    }

    @Test func animatedIsParsedEverywhereAndKeyed() throws {
        let config = ServiceConfiguration()
        func request(_ query: String) throws -> ThumbnailRequest {
            let pairs = query.split(separator: "&").map { part -> (name: String, value: String) in
                let kv = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                return (String(kv[0]), String(kv[1]))
            }
            return try ThumbnailRequest(query: [("url", "https://example.com/a.gif")] + pairs, config: config)
        }
        #expect(try request("w=10&format=webp").variant.animates)
        #expect(try !request("w=10&format=webp&animated=0").variant.animates)
        #expect(try !request("w=10&format=png").variant.animates)
        #expect(try request("w=10&format=webp&animated=1").variant.canonicalKey.hasSuffix("&animated=1"))
        #expect(try !request("w=10&format=webp").variant.canonicalKey.contains("animated"))
        for bad in ["2", "yes", "", "01"] {
            #expect(throws: ServiceError.badRequest("animated must be 0 or 1")) { try request("w=10&animated=\(bad)") }
        }
        let c = try DaemonConfiguration.parse(Array(#"""
            {"limits": {"maxAnimationFrames": 50, "maxAnimationPixels": 1000000},
             "output": {"presets": {"still": {"w": 64, "format": "webp", "animated": false}}}}
            """#.utf8))
        #expect(c.service.limits.maxAnimationFrames == 50 && c.service.limits.maxAnimationPixels == 1_000_000)
        #expect(c.service.output.presets["still"]?.animated == false)
        let roundTrip = try DaemonConfiguration.parse(Array(c.json.serialized(indent: 2).utf8))
        #expect(roundTrip.service.output.presets["still"]?.animated == false)
        #expect(roundTrip.service.limits.maxAnimationFrames == 50)
        let preset = try ThumbnailRequest(query: [("url", "https://example.com/a.gif"), ("preset", "still")],
                                          config: c.service)
        #expect(!preset.variant.animates && preset.variant.canonicalKey.hasSuffix("&animated=0"))
        for bad in [#"{"limits": {"maxAnimationFrames": 0}}"#, #"{"limits": {"maxAnimationPixels": -1}}"#,
                    #"{"output": {"presets": {"p": {"w": 1, "animated": 1}}}}"#] {
            #expect(throws: ConfigurationError.self) { try DaemonConfiguration.parse(Array(bad.utf8)) }
        }
    }
}
