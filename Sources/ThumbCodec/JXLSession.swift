import CThumbCodec
import ThumbImaging

/// The JPEG XL header probe (libjxl's basic info and frame events, no pixel).
enum JXLProbe {
    /// The header's facts and the displayed frames counted, up to
    /// `JXLStructure.maxFrames` + 1. Throws `tooLarge` over `maxPixels` from
    /// the basic info, before libjxl reads any frame.
    static func probe(_ bytes: UnsafeRawBufferPointer, maxPixels: Int) throws(CodecError) -> (thumbd_image_info, frames: Int) {
        var info = thumbd_image_info()
        var frames: UInt32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = thumbd_jxl_probe(bytes.baseAddress, bytes.count, UInt64(max(0, maxPixels)),
                                      UInt32(JXLStructure.maxFrames), &info, &frames, &message, message.count)
        if status == Int32(THUMBD_TOO_LARGE) { throw .tooLarge(width: Int(info.width), height: Int(info.height)) }
        try ImageDecoder.check(status, message)
        return (info, Int(frames))
    }

    /// FrameCount's answer: 1 for a file the probe refuses.
    static func frames(_ bytes: UnsafeRawBufferPointer) -> Int {
        (try? probe(bytes, maxPixels: .max).frames) ?? 1
    }
}

/// Drives one JPEG XL decode (the first displayed frame, decoded whole
/// inside open) through the C shim's common decoder, like `FormatSession`.
enum JXLSession {
    static func run<S: ScanlineSink>(_ bytes: UnsafeRawBufferPointer, header: ImageHeader, deadline: RenderDeadline,
                                     into sink: inout S) -> Result<DecodeInfo, CodecError> {
        var message = [CChar](repeating: 0, count: 256)
        var status: Int32 = 0
        var width: UInt32 = 0, height: UInt32 = 0
        guard let decoder = thumbd_jxl_open(bytes.baseAddress, bytes.count, UInt64(max(0, header.pixelLimit)), deadline.raw,
                                            &width, &height, &status, &message, message.count) else {
            return .failure(RowPump.failure(status, message))
        }
        defer { thumbd_decoder_close(decoder) }
        guard Int(width) == header.width, Int(height) == header.height else {
            return .failure(.corrupt("JPEG XL image differs from its header"))
        }
        thumbd_decoder_set_deadline(decoder, deadline.raw)
        return RowPump.run(width: Int(width), height: Int(height), scale: 8, color: colorHandling(decoder),
                           into: &sink) { buffer, max, read in
            thumbd_decoder_read(decoder, buffer, max, read, &message, message.count)
        } onError: { RowPump.failure($0, message) }
    }

    /// An XYB image arrives in sRGB (nothing to do); any other as its colour
    /// encoding says — H.273 codes for an enumerated one, else its ICC
    /// profile (ignored when unusable or over 4 MiB, as for every format).
    private static func colorHandling(_ decoder: OpaquePointer) -> ColorHandling {
        var profile: UnsafeRawPointer?
        var length = 0
        var nclx = thumbd_nclx()
        thumbd_decoder_color(decoder, &profile, &length, &nclx)
        let bytes = UnsafeRawBufferPointer(start: profile, count: profile == nil ? 0 : length)
        return ColorHandling(usableProfile: bytes, model: thumbd_jxl_color_model(decoder)) ?? ColorHandling(nclx: nclx)
    }
}
