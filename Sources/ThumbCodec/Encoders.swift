import CThumbCodec
import ThumbImaging

/// Baseline JPEG encoding (API.md § Output): JFIF header, 4:2:0, no Exif, ICC or comments.
public enum JPEGEncoder {
    /// Alpha is ignored: composite translucent bitmaps first.
    public static func encode(_ bitmap: Bitmap, quality: Int,
                              deadline: RenderDeadline = .none) throws(CodecError) -> [UInt8] {
        try EncodedBuffer.take { out, length, message, size in
            bitmap.pixels.withUnsafeBytes {
                thumbd_jpeg_encode($0.baseAddress, UInt32(bitmap.width), UInt32(bitmap.height),
                                   Int32(min(100, max(1, quality))), deadline.raw, out, length, message, size)
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
