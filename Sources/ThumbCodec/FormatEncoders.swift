import CThumbCodec
import ThumbImaging

/// Lossy WebP (API.md § Output `webp`): libwebp at quality `q`; when the bitmap has
/// any alpha < 255 the alpha plane is kept losslessly, else none is written.
public enum WebPEncoder {
    public static func encode(_ bitmap: Bitmap, quality: Int,
                              deadline: RenderDeadline = .none) throws(CodecError) -> [UInt8] {
        let alpha: Int32 = bitmap.isOpaque ? 0 : 1
        return try EncodedBuffer.take { out, length, message, size in
            bitmap.pixels.withUnsafeBytes {
                thumbd_webp_encode($0.baseAddress, UInt32(bitmap.width), UInt32(bitmap.height), alpha,
                                   Int32(min(100, max(0, quality))), deadline.raw, out, length, message, size)
            }
        }
    }
}

/// 8-bit 4:2:0 AVIF (API.md § Output `avif`) with libavif 0.11 and aom. libavif 0.11
/// has no quality setting: colour uses `quantizer(forQuality:)` as both its
/// minimum and maximum quantizer. Alpha, when any pixel has alpha < 255, is
/// coded losslessly (quantizer 0), as WebP's is; an opaque bitmap gets no
/// alpha item.
public enum AVIFEncoder {
    /// aom speed 0 (slowest) … 10 (libavif clamps aom to 9). Measured on the
    /// 2-core build machine for a 256×256 photo thumbnail at q 82, one thread:
    /// speed 9 takes 10–24 ms of CPU, speed 8 40–86 ms (over the ~50 ms
    /// budget), for files only ~7 % smaller.
    public static let speed = 9

    /// round(63·(100 − q)/100): 100 → 0 (lossless), 82 → 11, 0 → 63.
    public static func quantizer(forQuality quality: Int) -> Int {
        let q = Double(min(100, max(0, quality)))
        return Int((63 * (100 - q) / 100).rounded())
    }

    public static func encode(_ bitmap: Bitmap, quality: Int,
                              deadline: RenderDeadline = .none) throws(CodecError) -> [UInt8] {
        let alpha: Int32 = bitmap.isOpaque ? 0 : 1
        let quantizer = Int32(quantizer(forQuality: quality))
        return try EncodedBuffer.take { out, length, message, size in
            bitmap.pixels.withUnsafeBytes {
                thumbd_avif_encode($0.baseAddress, UInt32(bitmap.width), UInt32(bitmap.height), alpha, quantizer,
                                   Int32(speed), deadline.raw, out, length, message, size)
            }
        }
    }
}

/// Lossy JPEG XL (API.md § Output `jxl`) with libjxl 0.7: VarDCT in XYB, 8-bit
/// sRGB, a bare codestream (the container would add ~40 bytes and nothing
/// thumbd writes needs a box), no Exif, XMP or ICC. When any pixel has alpha
/// < 255 an 8-bit alpha channel is kept, else none is written. libjxl 0.7
/// has no separate alpha distance: alpha is coded with the frame's settings,
/// near but not exact (rocket.jpg's ramp with a clear hole at q 80: 53 dB,
/// 18 levels at worst, at the hole's hard edge), unlike WebP's and AVIF's lossless alpha.
public enum JXLEncoder {
    /// libjxl effort 1…9 (its default 7). Measured (`ThumbBench --jxl-efforts`,
    /// release build, thread CPU time, q 80 = distance 1.9) on four photos
    /// scaled by thumbd to 512 px: effort 5 writes the smallest files of
    /// efforts 3…7 on every one (rocket 14 975 bytes, Dragonfly 28 584,
    /// LadyBird 10 334, Storm 4 959; efforts 3–4 +11–18 %, 6–7 +1–3 %) in
    /// 11–15 ms; effort 4 takes 2–4 ms, effort 7 20–27 ms. AVIF at speed 9
    /// takes 4–11 ms for the same bitmaps: only efforts 3–4 stay within it.
    public static let defaultEffort = 5

    /// Butteraugli distance for thumbd's `q` until §17's calibrated table
    /// lands: cjxl 0.7's `-q` mapping (libjxl 0.9's JxlEncoderDistanceFromQuality,
    /// absent from 0.7): 0.1 + (100 − q)·0.09 from q 30 up, a quadratic below
    /// (q 1 → 23.9). q 100 gives 0.1, libjxl's best lossy setting, not lossless.
    public static func distance(forQuality quality: Int) -> Float {
        let q = Double(min(100, max(1, quality)))
        let d = q >= 30 ? 0.1 + (100 - q) * 0.09 : 53.0 / 3000.0 * q * q - 23.0 / 20.0 * q + 25.0
        return Float(d)
    }

    public static func encode(_ bitmap: Bitmap, quality: Int, effort: Int = defaultEffort,
                              deadline: RenderDeadline = .none) throws(CodecError) -> [UInt8] {
        let alpha: Int32 = bitmap.isOpaque ? 0 : 1
        let distance = distance(forQuality: quality)
        return try EncodedBuffer.take { out, length, message, size in
            bitmap.pixels.withUnsafeBytes {
                thumbd_jxl_encode($0.baseAddress, UInt32(bitmap.width), UInt32(bitmap.height), alpha, distance,
                                  Int32(min(9, max(1, effort))), deadline.raw, out, length, message, size)
            }
        }
    }
}
