import CThumbCodec
import ThumbImaging

/// Lossy WebP (API.md § Output `webp`) with libwebp; when the bitmap has any
/// alpha < 255 the alpha plane is kept losslessly, else none is written.
public enum WebPEncoder {
    /// libwebp's knobs thumbd sets; nil keeps WEBP_PRESET_DEFAULT's value.
    public struct Settings: Sendable, Equatable {
        /// libwebp's quality 0…100.
        public var quality: Float
        /// 0 (fastest) … 6.
        public var method: Int
        /// Deblocking filter strength 0…100.
        public var filterStrength: Int?
        /// 0…7.
        public var filterSharpness: Int
        /// Spatial noise shaping 0…100.
        public var snsStrength: Int?
        /// 1…4.
        public var segments: Int?
        /// RGB→YUV by iteration (libwebp's use_sharp_yuv): sharper chroma edges.
        public var sharpYUV: Bool

        public init(quality: Float, method: Int = 4, filterStrength: Int? = nil, filterSharpness: Int = 0,
                    snsStrength: Int? = nil, segments: Int? = nil, sharpYUV: Bool = false) {
            self.quality = quality
            self.method = method
            self.filterStrength = filterStrength
            self.filterSharpness = filterSharpness
            self.snsStrength = snsStrength
            self.segments = segments
            self.sharpYUV = sharpYUV
        }
    }

    /// `quality` is thumbd's `q`, through `QualityScale`.
    public static func encode(_ bitmap: Bitmap, quality: Int,
                              deadline: RenderDeadline = .none) throws(CodecError) -> [UInt8] {
        try encode(bitmap, settings: QualityScale.webp(quality), deadline: deadline)
    }

    public static func encode(_ bitmap: Bitmap, settings: Settings,
                              deadline: RenderDeadline = .none) throws(CodecError) -> [UInt8] {
        let alpha: Int32 = bitmap.isOpaque ? 0 : 1
        var c = thumbd_webp_settings(quality: min(100, max(0, settings.quality)),
                                     method: Int32(min(6, max(0, settings.method))),
                                     filter_strength: Int32(settings.filterStrength.map { min(100, max(0, $0)) } ?? -1),
                                     filter_sharpness: Int32(min(7, max(0, settings.filterSharpness))),
                                     sns_strength: Int32(settings.snsStrength.map { min(100, max(0, $0)) } ?? -1),
                                     segments: Int32(settings.segments.map { min(4, max(1, $0)) } ?? -1),
                                     sharp_yuv: settings.sharpYUV ? 1 : 0)
        return try EncodedBuffer.take { out, length, message, size in
            bitmap.pixels.withUnsafeBytes {
                thumbd_webp_encode($0.baseAddress, UInt32(bitmap.width), UInt32(bitmap.height), alpha, &c,
                                   deadline.raw, out, length, message, size)
            }
        }
    }
}

/// 8-bit AVIF (API.md § Output `avif`) with libavif 0.11. libavif 0.11 has no
/// quality setting: colour uses one quantizer as both its minimum and maximum.
/// Alpha, when any pixel has alpha < 255, is coded with `alphaQuantizer`; an
/// opaque bitmap gets no alpha item.
public enum AVIFEncoder {
    /// No SVT-AV1: it lost on CPU at thumbnail sizes (Quality.md § Encoder
    /// settings), and libSvtAv1Enc 1.4 raises the threads it runs on to
    /// SCHED_FIFO 99 whenever it may (as root: `thumbd thumbnail`, the test
    /// suite), where a long encode starves every other process on the host —
    /// found when one did, in this repository's own test run.
    public enum Codec: Sendable, Equatable { case aom, rav1e }

    /// Everything that decides an AVIF's bytes besides the pixels.
    public struct Settings: Sendable, Equatable {
        /// Colour quantizer 0 (lossless) … 63.
        public var quantizer: Int
        /// Alpha quantizer 0 (lossless) … 63.
        public var alphaQuantizer: Int
        /// libavif's speed 0 (slowest) … 10 (aom clamps to 9).
        public var speed: Int
        /// 4:4:4 instead of 4:2:0.
        public var fullChroma: Bool
        public var codec: Codec
        /// aom only: `quantizer` is aom's cq-level in its constant-quality
        /// mode with every quantizer allowed, so aom may vary it per block.
        public var adaptiveQuantizer: Bool
        /// Codec-specific options (aomenc's long names for aom), in order.
        public var options: [(String, String)]

        public init(quantizer: Int, alphaQuantizer: Int = 0, speed: Int = 9, fullChroma: Bool = false,
                    codec: Codec = .aom, adaptiveQuantizer: Bool = false, options: [(String, String)] = []) {
            self.quantizer = quantizer
            self.alphaQuantizer = alphaQuantizer
            self.speed = speed
            self.fullChroma = fullChroma
            self.codec = codec
            self.adaptiveQuantizer = adaptiveQuantizer
            self.options = options
        }

        public static func == (a: Settings, b: Settings) -> Bool {
            a.quantizer == b.quantizer && a.alphaQuantizer == b.alphaQuantizer && a.speed == b.speed
                && a.fullChroma == b.fullChroma && a.codec == b.codec && a.adaptiveQuantizer == b.adaptiveQuantizer
                && a.options.map { "\($0)=\($1)" } == b.options.map { "\($0)=\($1)" }
        }
    }

    /// `quality` is thumbd's `q`, through `QualityScale`.
    public static func encode(_ bitmap: Bitmap, quality: Int,
                              deadline: RenderDeadline = .none) throws(CodecError) -> [UInt8] {
        try encode(bitmap, settings: QualityScale.avif(quality), deadline: deadline)
    }

    public static func encode(_ bitmap: Bitmap, settings: Settings,
                              deadline: RenderDeadline = .none) throws(CodecError) -> [UInt8] {
        let alpha: Int32 = bitmap.isOpaque ? 0 : 1
        let codec = settings.codec
        let options = settings.options.map { "\($0)=\($1)" }.joined(separator: ";")
        // withCString's closure cannot throw a typed error: the failure is carried out.
        var failure: CodecError?
        let bytes = options.withCString { text -> [UInt8] in
            var c = thumbd_avif_settings(quantizer: Int32(min(63, max(0, settings.quantizer))),
                                         alpha_quantizer: Int32(min(63, max(0, settings.alphaQuantizer))),
                                         speed: Int32(min(10, max(0, settings.speed))),
                                         yuv444: settings.fullChroma ? 1 : 0,
                                         codec: Int32(codec == .rav1e ? THUMBD_AV1_RAV1E : THUMBD_AV1_AOM),
                                         adaptive_quantizer: settings.adaptiveQuantizer ? 1 : 0,
                                         options: options.isEmpty ? nil : text)
            do throws(CodecError) {
                return try EncodedBuffer.take { out, length, message, size in
                    bitmap.pixels.withUnsafeBytes {
                        thumbd_avif_encode($0.baseAddress, UInt32(bitmap.width), UInt32(bitmap.height), alpha, &c,
                                           deadline.raw, out, length, message, size)
                    }
                }
            } catch {
                failure = error
                return []
            }
        }
        if let failure { throw failure }
        return bytes
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

    public struct Settings: Sendable, Equatable {
        /// Butteraugli distance 0.1 (libjxl's best lossy) … 25.
        public var distance: Float
        /// libjxl effort 1…9.
        public var effort: Int

        public init(distance: Float, effort: Int = JXLEncoder.defaultEffort) {
            self.distance = distance
            self.effort = effort
        }
    }

    /// `quality` is thumbd's `q`, through `QualityScale`.
    public static func encode(_ bitmap: Bitmap, quality: Int, effort: Int = defaultEffort,
                              deadline: RenderDeadline = .none) throws(CodecError) -> [UInt8] {
        var settings = QualityScale.jxl(quality)
        settings.effort = effort
        return try encode(bitmap, settings: settings, deadline: deadline)
    }

    public static func encode(_ bitmap: Bitmap, settings: Settings,
                              deadline: RenderDeadline = .none) throws(CodecError) -> [UInt8] {
        let alpha: Int32 = bitmap.isOpaque ? 0 : 1
        let distance = min(25, max(0.1, settings.distance))
        return try EncodedBuffer.take { out, length, message, size in
            bitmap.pixels.withUnsafeBytes {
                thumbd_jxl_encode($0.baseAddress, UInt32(bitmap.width), UInt32(bitmap.height), alpha, distance,
                                  Int32(min(9, max(1, settings.effort))), deadline.raw, out, length, message, size)
            }
        }
    }
}
