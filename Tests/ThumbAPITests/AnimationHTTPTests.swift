import Foundation
import Testing
import ThumbTestSupport
@testable import ThumbAPI
@testable import ThumbService
import ThumbCodec
import ThumbImaging

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

    /// The durations of an animated WebP answer's frames: each `ANMF`
    /// payload's bytes 12…14, little-endian.
    private static func durations(ofWebP bytes: [UInt8]) -> [Int] {
        var durations: [Int] = [], at = 12
        while at + 8 <= bytes.count {
            let size = Int(bytes[at + 4]) | Int(bytes[at + 5]) << 8 | Int(bytes[at + 6]) << 16 | Int(bytes[at + 7]) << 24
            if Array(bytes[at..<at + 4]) == Array("ANMF".utf8), at + 8 + 15 <= bytes.count {
                let d = at + 8 + 12
                durations.append(Int(bytes[d]) | Int(bytes[d + 1]) << 8 | Int(bytes[d + 2]) << 16)
            }
            at += 8 + size + (size & 1)
        }
        return durations
    }

    /// A 16×16 GIF, frame after frame of one colour (a palette index: 0 red,
    /// 1 green, 2 blue) shown for `delay` centiseconds, looping forever. The
    /// LZW data is literal codes of 3 bits, a clear code before every two, so
    /// the code width never grows.
    static func solidGIF(_ frames: [(index: UInt8, delay: Int)]) -> [UInt8] {
        var gif = Array("GIF89a".utf8) + [16, 0, 16, 0, 0x81, 0, 0] + [255, 0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0]
        gif += [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1, 0, 0, 0]
        for (index, delay) in frames {
            gif += [0x21, 0xF9, 4, 1 << 2, UInt8(delay & 0xFF), UInt8(delay >> 8), 0, 0]
            gif += [0x2C, 0, 0, 0, 0, 16, 0, 16, 0, 0, 2]
            var codes: [UInt8] = []
            for _ in 0..<128 { codes += [4, index, index] }
            codes.append(5)
            var data: [UInt8] = [], bits = 0, count = 0
            for code in codes {
                bits |= Int(code) << count
                count += 3
                while count >= 8 {
                    data.append(UInt8(bits & 0xFF))
                    bits >>= 8
                    count -= 8
                }
            }
            if count > 0 { data.append(UInt8(bits & 0xFF)) }
            var at = 0
            while at < data.count {
                let n = min(255, data.count - at)
                gif += [UInt8(n)] + data[at..<at + n]
                at += n
            }
            gif.append(0)
        }
        return gif + [0x3B]
    }

    private func withAnimations(_ change: (inout DaemonConfiguration) -> Void = { _ in },
                                _ body: (EndToEndTests.TestDaemon, TestOrigin) throws -> Void) throws {
        let origin = try TestOrigin(extraRoutes: ["/squares.gif": try Self.fixture("rotating-squares.gif"),
                                                  "/squares.webp": try Self.fixture("rotating-squares.webp"),
                                                  "/same.gif": Self.solidGIF(Array(repeating: (0, 5), count: 20)),
                                                  "/aab.gif": Self.solidGIF([(0, 5), (0, 7), (2, 10)]),
                                                  "/rgb.gif": Self.solidGIF([(0, 5), (1, 5), (2, 5)]),
                                                  "/zero.webp": try Self.zeroDurationWebP()])
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

    /// A WebP source of solid red, green and blue frames of 0, 0 and 100 ms.
    static func zeroDurationWebP() throws -> [UInt8] {
        let encoder = try AnimatedWebPEncoder(width: 16, height: 16, quality: 90, loopCount: 0)
        for (rgb, duration) in [((255, 0, 0), 0), ((0, 255, 0), 0), ((0, 0, 255), 100)] {
            let pixel: [UInt8] = [UInt8(rgb.0), UInt8(rgb.1), UInt8(rgb.2), 255]
            try encoder.add(Bitmap(width: 16, height: 16, pixels: Array((0..<256).map { _ in pixel }.joined())),
                            durationMilliseconds: duration)
        }
        return try encoder.finish()
    }

    /// `X-Image-Frames` counts the answer's own frames, after identical
    /// neighbours are merged with their durations summed (API.md § Animation):
    /// 20 identical frames are a still, and red, red, blue are two frames.
    @Test func identicalNeighboursAreCountedOnce() throws {
        try withAnimations { daemon, origin in
            let same = daemon.get(target(origin, "/same.gif", "w=16&format=webp"))
            #expect(same.status == 200 && same.headers["content-type"] == "image/webp")
            #expect(same.headers["x-image-frames"] == nil, "20 identical frames: \(same.headers["x-image-frames"] ?? "-")")
            #expect(Self.frames(ofWebP: same.body) <= 1)
            // From memory, the same.
            let again = daemon.get(target(origin, "/same.gif", "w=16&format=webp"))
            #expect(again.headers["x-cache"] == "memory" && again.headers["x-image-frames"] == nil)

            let aab = daemon.get(target(origin, "/aab.gif", "w=16&format=webp"))
            #expect(aab.status == 200 && aab.headers["x-image-frames"] == "2")
            #expect(Self.frames(ofWebP: aab.body) == 2 && Self.durations(ofWebP: aab.body) == [120, 100])
        }
    }

    /// A WebP source's 0-ms frames stay 0 ms in the animated answer (API.md § Animation).
    @Test func zeroMillisecondWebPFramesStayZero() throws {
        try withAnimations { daemon, origin in
            let source = try Self.zeroDurationWebP()
            #expect(Self.durations(ofWebP: source) == [0, 0, 100])
            let answer = daemon.get(target(origin, "/zero.webp", "w=16&format=webp"))
            #expect(answer.status == 200 && answer.headers["x-image-frames"] == "3")
            #expect(Self.durations(ofWebP: answer.body) == [0, 0, 100])
        }
    }

    /// `animated=1` is the default's spelling: one cache entry and one ETag
    /// with leaving it out, in either order; `animated=0` is another entry.
    @Test func animatedOneSharesTheDefaultsEntryAndETag() throws {
        try withAnimations { daemon, origin in
            for (path, first) in [("/squares.gif", "w=40&format=webp"), ("/squares.webp", "w=40&format=webp&animated=1")] {
                let second = first.hasSuffix("animated=1") ? "w=40&format=webp" : "w=40&format=webp&animated=1"
                let a = daemon.get(target(origin, path, first))
                let b = daemon.get(target(origin, path, second))
                #expect(a.status == 200 && a.headers["x-cache"] == "origin" && a.headers["x-image-frames"] != nil)
                #expect(b.status == 200 && b.headers["x-cache"] == "memory", "\(path): \(second) after \(first)")
                #expect(b.headers["etag"] == a.headers["etag"] && b.body == a.body)
                let conditional = daemon.get(target(origin, path, second), headers: ["If-None-Match": a.headers["etag"] ?? ""])
                #expect(conditional.status == 304)
                let still = daemon.get(target(origin, path, "w=40&format=webp&animated=0"))
                #expect(still.status == 200 && still.headers["etag"] != a.headers["etag"])
            }
        }
    }

    @Test func maxAnimationFramesDropsTheRest() throws {
        try withAnimations({ $0.service.limits.maxAnimationFrames = 2 }) { daemon, origin in
            // Red, green, blue: the blue frame is dropped; the other two differ, so
            // neither is merged and the answer holds both.
            let answer = daemon.get(target(origin, "/rgb.gif", "w=16&format=webp"))
            #expect(answer.status == 200 && answer.headers["x-image-frames"] == "2")
            #expect(Self.durations(ofWebP: answer.body) == [50, 50])
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
        // animated=1 is the default's spelling: the same variant (key, hash, equality); animated=0 is keyed.
        #expect(try request("w=10&format=webp&animated=1").variant == request("w=10&format=webp").variant)
        #expect(try !request("w=10&format=webp&animated=1").variant.canonicalKey.contains("animated"))
        #expect(try !request("w=10&format=webp").variant.canonicalKey.contains("animated"))
        #expect(try request("w=10&format=webp&animated=0").variant.canonicalKey.hasSuffix("&animated=0"))
        #expect(try request("w=10&format=png&animated=0").variant.canonicalKey.hasSuffix("&animated=0"))
        // Other equivalent spellings already share one variant.
        #expect(try request("w=5&dpr=2&format=webp").variant == request("w=10&format=webp").variant)
        #expect(try request("w=10&h=10&fit=inside&gravity=north&format=webp").variant
                == request("w=10&h=10&format=webp").variant)
        #expect(try request("w=10&format=png&bg=FF0000").variant == request("w=10&format=png").variant)
        #expect(try request("w=10&format=jpeg&bg=FF0000").variant == request("w=10&format=jpeg&bg=ff0000").variant)
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
        // A preset's animated: true is the default too.
        let moving = try DaemonConfiguration.parse(Array(#"""
            {"output": {"presets": {"moving": {"w": 10, "format": "webp", "animated": true}}}}
            """#.utf8))
        #expect(try ThumbnailRequest(query: [("url", "https://example.com/a.gif"), ("preset", "moving")],
                                     config: moving.service).variant == request("w=10&format=webp").variant)
        for bad in [#"{"limits": {"maxAnimationFrames": 0}}"#, #"{"limits": {"maxAnimationPixels": -1}}"#,
                    #"{"output": {"presets": {"p": {"w": 1, "animated": 1}}}}"#] {
            #expect(throws: ConfigurationError.self) { try DaemonConfiguration.parse(Array(bad.utf8)) }
        }
    }
}
