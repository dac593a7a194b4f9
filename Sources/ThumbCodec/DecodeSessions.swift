import CThumbCodec
import ThumbImaging

/// Drives one incremental JPEG decode through the C shim: every library call
/// that can longjmp happens inside the shim; Swift only sees status codes.
enum JPEGSession {
    static func run<S: ScanlineSink>(_ bytes: UnsafeRawBufferPointer, scaleNumerator: Int, deadline: RenderDeadline,
                                     into sink: inout S) -> Result<DecodeInfo, CodecError> {
        var message = [CChar](repeating: 0, count: 256)
        var status: Int32 = 0
        var width: UInt32 = 0, height: UInt32 = 0
        guard let decoder = thumbd_jpeg_open(bytes.baseAddress, bytes.count, Int32(scaleNumerator), deadline.raw,
                                             &width, &height, &status, &message, message.count) else {
            return .failure(RowPump.failure(status, message))
        }
        defer { thumbd_jpeg_close(decoder) }
        let (color, isCMYK) = colorHandling(decoder)
        if case .transform(let transform) = color, isCMYK {
            // CMYK rows never reach Swift: the decoder converts them with the transform.
            thumbd_jpeg_use_cmyk_profile(decoder, transform.handle)
            return withExtendedLifetime(transform) {
                RowPump.run(width: Int(width), height: Int(height), scale: scaleNumerator, into: &sink) { buffer, max, read in
                    thumbd_jpeg_read(decoder, buffer, max, read, &message, message.count)
                } onError: { RowPump.failure($0, message) }
            }
        }
        return RowPump.run(width: Int(width), height: Int(height), scale: scaleNumerator, color: color, into: &sink) { buffer, max, read in
            thumbd_jpeg_read(decoder, buffer, max, read, &message, message.count)
        } onError: { RowPump.failure($0, message) }
    }

    /// The embedded APP2 profile, checked against the JPEG's colour model.
    private static func colorHandling(_ decoder: OpaquePointer) -> (ColorHandling, isCMYK: Bool) {
        var profile: UnsafeRawPointer?
        var length = 0
        var model: Int32 = 0, inverted: Int32 = 0
        thumbd_jpeg_color(decoder, &profile, &length, &model, &inverted)
        let handling = ColorHandling(profile: UnsafeRawBufferPointer(start: profile, count: profile == nil ? 0 : length),
                                     model: model, cmykInverted: inverted != 0)
        return (handling, model == Int32(THUMBD_CMYK))
    }
}

/// Drives one incremental PNG decode through the C shim.
enum PNGSession {
    static func run<S: ScanlineSink>(_ bytes: UnsafeRawBufferPointer, deadline: RenderDeadline,
                                     into sink: inout S) -> Result<DecodeInfo, CodecError> {
        var message = [CChar](repeating: 0, count: 256)
        var status: Int32 = 0
        var width: UInt32 = 0, height: UInt32 = 0
        guard let decoder = thumbd_png_open(bytes.baseAddress, bytes.count, deadline.raw, &width, &height,
                                            &status, &message, message.count) else {
            return .failure(RowPump.failure(status, message))
        }
        defer { thumbd_png_close(decoder) }
        var profile: UnsafeRawPointer?
        var length = 0
        var model: Int32 = 0
        thumbd_png_color(decoder, &profile, &length, &model)
        let color = ColorHandling(profile: UnsafeRawBufferPointer(start: profile, count: profile == nil ? 0 : length),
                                  model: model)
        return RowPump.run(width: Int(width), height: Int(height), scale: 8, color: color, into: &sink) { buffer, max, read in
            thumbd_png_read(decoder, buffer, max, read, &message, message.count)
        } onError: { RowPump.failure($0, message) }
    }
}
