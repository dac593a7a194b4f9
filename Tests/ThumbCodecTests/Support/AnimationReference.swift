import Foundation
import ThumbCodec
import ThumbImaging

/// One line of Fixtures/animation/references.txt (make-animation-references.py):
/// Pillow's composited frames of an animation, with its loop count and durations.
struct AnimationReference {
    /// The fixture's path under Fixtures/.
    let path: String
    let frames: Int
    /// The NETSCAPE count as stored (nil: no extension), or a WebP's loop count.
    let loop: Int?
    /// Pillow's durations in ms (a GIF's delay as stored).
    let durations: [Int]

    static func all() -> [AnimationReference] {
        let text = String(decoding: Fixtures.bytes("animation/references.txt"), as: UTF8.self)
        return text.split(separator: "\n").filter { $0.first != "#" }.map { parse(String($0)) }
    }

    /// "PATH_WITH_UNDERSCORE frames=N loop=L durations=D0,D1,…"
    private static func parse(_ line: String) -> AnimationReference {
        let fields: [String] = line.split(separator: " ").map { String($0) }
        var values: [String: String] = [:]
        for field in fields.dropFirst() {
            let parts = field.split(separator: "=", maxSplits: 1).map { String($0) }
            values[parts[0]] = parts[1]
        }
        let durations: [Int] = values["durations"]!.split(separator: ",").map { Int(String($0))! }
        let path = fields[0].replacingOccurrences(of: "_", with: "/", options: [], range: fields[0].range(of: "_"))
        return AnimationReference(path: path, frames: Int(values["frames"]!)!, loop: Int(values["loop"]!),
                                  durations: durations)
    }

    static func named(_ path: String) -> AnimationReference { all().first { $0.path == path }! }

    var bytes: [UInt8] { Fixtures.bytes(path) }
    var isGIF: Bool { path.hasSuffix(".gif") }

    /// The durations thumbd gives: a GIF delay under 20 ms shows 100 ms, as in browsers.
    var expectedDurations: [Int] { durations.map { isGIF && $0 < 20 ? 100 : $0 } }

    /// Pillow's frames at full size (`scaled` false) or at the 48-px `inside` size.
    func referenceFrames(scaled: Bool = false) throws -> [Bitmap] {
        let name = path.replacingOccurrences(of: "/", with: "_") + (scaled ? "@48" : "")
        let strip = try ImageDecoder.decodeBitmap(Fixtures.bytes("animation/references/\(name).png"), maxPixels: 1 << 24).bitmap
        let height = strip.height / frames
        return (0..<frames).map { i in
            Bitmap(width: strip.width, height: height,
                   pixels: Array(strip.pixels[(i * height * strip.stride)..<((i + 1) * height * strip.stride)]))
        }
    }
}

/// Comparisons of frames that see only what shows: a pixel's colour counts
/// in proportion to its alpha.
enum FrameCompare {
    /// Pixels that differ once fully transparent ones are taken as (0,0,0,0).
    static func differingPixels(_ a: Bitmap, _ b: Bitmap) -> Int {
        precondition(a.width == b.width && a.height == b.height)
        var count = 0
        for p in 0..<(a.width * a.height) {
            let o = p * 4
            if a.pixels[o + 3] == 0 && b.pixels[o + 3] == 0 { continue }
            if a.pixels[o..<(o + 4)] != b.pixels[o..<(o + 4)] { count += 1 }
        }
        return count
    }
}
