import Foundation
import ThumbCodec
import ThumbImaging

/// libjxl's own decoder (`djxl`, Debian's libjxl-tools) as the reference a
/// JPEG XL answer is compared with: thumbd's decoder must not judge its own encoder.
public enum Djxl {
    public struct Failed: Error, CustomStringConvertible {
        public let status: Int32
        public var description: String { "djxl exited with \(status)" }
    }

    /// `jxl` decoded by `djxl` to PNG, read back by thumbd's PNG decoder.
    public static func decode(_ jxl: [UInt8]) throws -> Bitmap {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("thumbd-djxl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.jxl"), output = dir.appendingPathComponent("out.png")
        try Data(jxl).write(to: input)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/djxl")
        process.arguments = [input.path, output.path, "--num_threads=0"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Failed(status: process.terminationStatus) }
        return try ImageDecoder.decodeBitmap([UInt8](try Data(contentsOf: output)), maxPixels: 1 << 24).bitmap
    }
}
