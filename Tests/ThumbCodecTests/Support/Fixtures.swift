import CCrypto
import Foundation
import ThumbCodec
import ThumbImaging

/// Test fixtures (see Fixtures/SOURCES.md for where each file comes from).
enum Fixtures {
    static let root = Bundle.module.url(forResource: "Fixtures", withExtension: nil)!

    static func bytes(_ name: String) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: root.appendingPathComponent(name).path) else {
            fatalError("missing fixture \(name)")
        }
        return [UInt8](data)
    }

    static func names(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(folder).path)) ?? []).sorted()
    }

    /// A binary PPM (P6, maxval 255) as width, height and RGB bytes.
    static func ppm(_ name: String) -> (width: Int, height: Int, rgb: [UInt8]) {
        let data = bytes(name)
        var fields: [Int] = []
        var i = 2
        while fields.count < 3 {
            while data[i] == 0x20 || data[i] == 0x0A || data[i] == 0x0D || data[i] == 0x09 { i += 1 }
            var v = 0
            while (0x30...0x39).contains(data[i]) { v = v * 10 + Int(data[i] - 0x30); i += 1 }
            fields.append(v)
        }
        i += 1
        return (fields[0], fields[1], Array(data[i...]))
    }

    static func sha256Hex(_ bytes: [UInt8]) -> String {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = bytes.withUnsafeBufferPointer { EVP_Digest($0.baseAddress, $0.count, &out, &length, EVP_sha256(), nil) }
        return out.map { String(format: "%02x", $0) }.joined()
    }

    /// Largest per-channel difference between RGBA pixels and RGB reference bytes.
    static func maxDifference(_ bitmap: Bitmap, rgb: [UInt8]) -> Int {
        var worst = 0
        for p in 0..<(bitmap.width * bitmap.height) {
            for c in 0..<3 { worst = max(worst, abs(Int(bitmap.pixels[p * 4 + c]) - Int(rgb[p * 3 + c]))) }
        }
        return worst
    }

    static func meanDifference(_ bitmap: Bitmap, rgb: [UInt8]) -> Double {
        var total = 0
        for p in 0..<(bitmap.width * bitmap.height) {
            for c in 0..<3 { total += abs(Int(bitmap.pixels[p * 4 + c]) - Int(rgb[p * 3 + c])) }
        }
        return Double(total) / Double(bitmap.width * bitmap.height * 3)
    }
}

/// Counts what a decoder does to a sink, to show when no pixel memory was asked for.
struct CountingSink: ScanlineSink {
    var begun = 0
    var rows = 0
    mutating func begin(width: Int, height: Int, color: SourceColorSpace) { begun += 1 }
    mutating func consume(_ rows: UnsafeRawBufferPointer, rowCount: Int) { self.rows += rowCount }
}
