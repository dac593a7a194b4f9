import Foundation
import ThumbCodec
import ThumbImaging

/// Colour-profile fixtures (Fixtures/icc, see SOURCES.md) and JPEGs tagged at
/// test time: APP2 segments are simple enough to write here, so the JPEG
/// cases need no extra binary files.
enum ICC {
    static func profile(_ name: String) -> [UInt8] { Fixtures.bytes("icc/\(name)") }

    /// A decoded reference image (an untagged PNG under Fixtures/icc/ref).
    static func reference(_ name: String) throws -> Bitmap {
        try ImageDecoder.decodeBitmap(Fixtures.bytes("icc/ref/\(name)"), maxPixels: 1 << 20).bitmap
    }

    static func decode(_ data: [UInt8]) throws -> Bitmap {
        try ImageDecoder.decodeBitmap(data, maxPixels: 1 << 22).bitmap
    }

    /// Complete APP2 markers carrying `profile`: "ICC_PROFILE\0", sequence
    /// number (1-based), count, then at most `chunk` bytes of the profile.
    static func segments(_ profile: [UInt8], chunk: Int = 65519) -> [[UInt8]] {
        let parts = stride(from: 0, to: profile.count, by: chunk).map { Array(profile[$0..<min($0 + chunk, profile.count)]) }
        return parts.enumerated().map { i, part in
            let length = 2 + 14 + part.count
            return [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + Array("ICC_PROFILE".utf8) + [0]
                + [UInt8(i + 1), UInt8(parts.count)] + part
        }
    }

    /// `jpeg` with `markers` inserted right after SOI, in the order given.
    static func tagging(_ jpeg: [UInt8], with markers: [[UInt8]]) -> [UInt8] {
        var out = Array(jpeg[0..<2])
        for marker in markers { out += marker }   // array appends copy in bulk, even in debug builds
        return out + jpeg[2...]
    }

    static func tagging(_ jpeg: [UInt8], profile: [UInt8]) -> [UInt8] {
        tagging(jpeg, with: segments(profile))
    }

    /// `jpeg` without its APP2 ICC_PROFILE segments (markers before the first scan only).
    static func strippingProfile(_ jpeg: [UInt8]) -> [UInt8] {
        var out = Array(jpeg[0..<2])
        var i = 2
        while i + 4 <= jpeg.count, jpeg[i] == 0xFF, jpeg[i + 1] != 0xDA {
            let end = i + 2 + (Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3]))
            let isICC = jpeg[i + 1] == 0xE2 && end - i >= 16 && Array(jpeg[(i + 4)..<(i + 15)]) == Array("ICC_PROFILE".utf8)
            if !isICC { out += jpeg[i..<end] }
            i = end
        }
        return out + jpeg[i...]
    }

    /// A valid profile grown to `size` bytes: zeros after its tags, the
    /// header's size field updated (lcms2 reads only what the tag table points at).
    static func padded(_ profile: [UInt8], to size: Int) -> [UInt8] {
        [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
            + profile[4...] + [UInt8](repeating: 0, count: size - profile.count)
    }

    /// Mean absolute difference over R, G and B (0…255 scale).
    static func meanDifference(_ a: Bitmap, _ b: Bitmap) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        var total = 0
        for p in 0..<(a.width * a.height) {
            for c in 0..<3 { total += abs(Int(a.pixels[p * 4 + c]) - Int(b.pixels[p * 4 + c])) }
        }
        return Double(total) / Double(a.width * a.height * 3)
    }

    /// The fraction of R, G and B values that differ by more than `limit`.
    static func fractionDiffering(_ a: Bitmap, _ b: Bitmap, byMoreThan limit: Int) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        var count = 0
        for p in 0..<(a.width * a.height) {
            for c in 0..<3 where abs(Int(a.pixels[p * 4 + c]) - Int(b.pixels[p * 4 + c])) > limit { count += 1 }
        }
        return Double(count) / Double(a.width * a.height * 3)
    }

    /// Largest per-channel difference over R, G and B.
    static func maxDifference(_ a: Bitmap, _ b: Bitmap) -> Int {
        precondition(a.width == b.width && a.height == b.height)
        var worst = 0
        for p in 0..<(a.width * a.height) {
            for c in 0..<3 { worst = max(worst, abs(Int(a.pixels[p * 4 + c]) - Int(b.pixels[p * 4 + c]))) }
        }
        return worst
    }

    /// PSNR over R, G and B in dB (infinite when identical).
    static func psnr(_ a: Bitmap, _ b: Bitmap) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        var total = 0.0
        for p in 0..<(a.width * a.height) {
            for c in 0..<3 { let d = Double(a.pixels[p * 4 + c]) - Double(b.pixels[p * 4 + c]); total += d * d }
        }
        let mse = total / Double(a.width * a.height * 3)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }
}
