import CThumbCodec
import ThumbImaging

/// JPEG encoding (API.md § Output): JFIF header, optimized Huffman tables, no Exif, ICC or comments.
public enum JPEGEncoder {
    /// Everything that decides a JPEG's bytes besides the pixels.
    public struct Settings: Sendable, Equatable {
        public enum Table: Sendable, Equatable { case annexK, robidoux }
        /// libjpeg's quality 1…100 (jpeg_quality_scaling of the table).
        public var quality: Int
        public var progressive: Bool
        /// 4:4:4 instead of 4:2:0.
        public var fullChroma: Bool
        public var table: Table

        public init(quality: Int, progressive: Bool = false, fullChroma: Bool = false, table: Table = .annexK) {
            self.quality = quality
            self.progressive = progressive
            self.fullChroma = fullChroma
            self.table = table
        }
    }

    /// Alpha is ignored: composite translucent bitmaps first. `quality` is
    /// thumbd's `q`, through `QualityScale`.
    public static func encode(_ bitmap: Bitmap, quality: Int,
                              deadline: RenderDeadline = .none) throws(CodecError) -> [UInt8] {
        try encode(bitmap, settings: QualityScale.jpeg(quality), deadline: deadline)
    }

    public static func encode(_ bitmap: Bitmap, settings: Settings,
                              deadline: RenderDeadline = .none) throws(CodecError) -> [UInt8] {
        var c = thumbd_jpeg_settings(quality: Int32(min(100, max(1, settings.quality))),
                                     progressive: settings.progressive ? 1 : 0, yuv444: settings.fullChroma ? 1 : 0,
                                     table: Int32(settings.table == .robidoux ? THUMBD_JPEG_TABLE_ROBIDOUX
                                                                               : THUMBD_JPEG_TABLE_ANNEX_K))
        return try EncodedBuffer.take { out, length, message, size in
            bitmap.pixels.withUnsafeBytes {
                thumbd_jpeg_encode($0.baseAddress, UInt32(bitmap.width), UInt32(bitmap.height), &c, deadline.raw,
                                   out, length, message, size)
            }
        }
    }
}

/// 8-bit PNG encoding: RGB when every pixel is opaque, RGBA otherwise.
public enum PNGEncoder {
    public static func encode(_ bitmap: Bitmap, deadline: RenderDeadline = .none) throws(CodecError) -> [UInt8] {
        let alpha: Int32 = bitmap.isOpaque ? 0 : 1
        return try EncodedBuffer.take { out, length, message, size in
            bitmap.pixels.withUnsafeBytes {
                thumbd_png_encode($0.baseAddress, UInt32(bitmap.width), UInt32(bitmap.height), alpha, deadline.raw,
                                  out, length, message, size)
            }
        }
    }
}

/// Copies a buffer the C encoders malloc'd into Swift and frees it.
enum EncodedBuffer {
    static func take(_ call: (UnsafeMutablePointer<UnsafeMutableRawPointer?>, UnsafeMutablePointer<Int>,
                              UnsafeMutablePointer<CChar>, Int) -> Int32) throws(CodecError) -> [UInt8] {
        var out: UnsafeMutableRawPointer?
        var length = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = call(&out, &length, &message, message.count)
        defer { thumbd_free(out) }
        if status == Int32(THUMBD_DEADLINE) { throw .deadlineExceeded }
        guard status == 0, let out else { throw .encodeFailed(String(cString: message)) }
        return Array(UnsafeRawBufferPointer(start: out, count: length))
    }
}
