import Foundation
import ThumbCodec
import ThumbImaging

/// One line of Fixtures/formats/reference.txt (see make-format-reference.py):
/// an independent decoder's RGBA8 pixels of a fixture, every `step`-th pixel.
struct FormatReference {
    let name: String
    let width: Int
    let height: Int
    let step: Int

    static func all() -> [FormatReference] {
        String(decoding: Fixtures.bytes("formats/reference.txt"), as: UTF8.self).split(separator: "\n").map {
            let f = $0.split(separator: " ").map(String.init)
            return FormatReference(name: f[0], width: Int(f[1])!, height: Int(f[2])!, step: Int(f[3])!)
        }
    }

    static func named(_ name: String) -> FormatReference {
        all().first { $0.name == name }!
    }

    /// The stored sample, read with our PNG decoder (checked against PngSuite).
    func pixels() throws -> Bitmap {
        try ImageDecoder.decodeBitmap(Fixtures.bytes("formats/reference/\(name).png"), maxPixels: 1 << 24).bitmap
    }

    /// PSNR in dB over all four channels between the reference sample and the
    /// same pixels of `bitmap`, fully transparent pixels taken as (0,0,0,0);
    /// .infinity when identical.
    func psnr(of bitmap: Bitmap) throws -> Double {
        let reference = try pixels()
        var squared = 0.0
        var count = 0
        for (ry, y) in stride(from: 0, to: bitmap.height, by: step).enumerated() {
            for (rx, x) in stride(from: 0, to: bitmap.width, by: step).enumerated() {
                let a = Self.canonical(bitmap[x, y]), b = Self.canonical(reference[rx, ry])
                for c in 0..<4 {
                    let d = Double(Int(a[c]) - Int(b[c]))
                    squared += d * d
                }
                count += 4
            }
        }
        guard squared > 0 else { return .infinity }
        return 10 * log10(255 * 255 / (squared / Double(count)))
    }

    private static func canonical(_ p: (r: UInt8, g: UInt8, b: UInt8, a: UInt8)) -> [UInt8] {
        p.a == 0 ? [0, 0, 0, 0] : [p.r, p.g, p.b, p.a]
    }
}

/// PSNR in dB between two bitmaps of one size over RGB (alpha ignored), or over alpha only.
enum BitmapPSNR {
    static func rgb(_ a: Bitmap, _ b: Bitmap) -> Double { psnr(a, b, channels: 0..<3) }
    static func alpha(_ a: Bitmap, _ b: Bitmap) -> Double { psnr(a, b, channels: 3..<4) }

    private static func psnr(_ a: Bitmap, _ b: Bitmap, channels: Range<Int>) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        var squared = 0.0
        for p in 0..<(a.width * a.height) {
            for c in channels {
                let d = Double(Int(a.pixels[p * 4 + c]) - Int(b.pixels[p * 4 + c]))
                squared += d * d
            }
        }
        guard squared > 0 else { return .infinity }
        return 10 * log10(255 * 255 / (squared / Double(a.width * a.height * channels.count)))
    }
}
