import CThumbCodec
import ThumbImaging

/// Drives one incremental JPEG decode through the C shim: every library call
/// that can longjmp happens inside the shim; Swift only sees status codes.
enum JPEGSession {
    static func run<S: ScanlineSink>(_ bytes: UnsafeRawBufferPointer, scaleNumerator: Int,
                                     into sink: inout S) -> Result<DecodeInfo, CodecError> {
        var message = [CChar](repeating: 0, count: 256)
        var status: Int32 = 0
        var width: UInt32 = 0, height: UInt32 = 0
        guard let decoder = thumbd_jpeg_open(bytes.baseAddress, bytes.count, Int32(scaleNumerator),
                                             &width, &height, &status, &message, message.count) else {
            return .failure(failure(status, message))
        }
        defer { thumbd_jpeg_close(decoder) }
        let (color, isCMYK) = colorHandling(decoder)
        if case .transform(let transform) = color, isCMYK {
            // CMYK rows never reach Swift: the decoder converts them with the transform.
            thumbd_jpeg_use_cmyk_profile(decoder, transform.handle)
            return withExtendedLifetime(transform) {
                pump(width: Int(width), height: Int(height), scale: scaleNumerator, into: &sink) { buffer, max, read in
                    thumbd_jpeg_read(decoder, buffer, max, read, &message, message.count)
                } onError: { failure($0, message) }
            }
        }
        return pump(width: Int(width), height: Int(height), scale: scaleNumerator, color: color, into: &sink) { buffer, max, read in
            thumbd_jpeg_read(decoder, buffer, max, read, &message, message.count)
        } onError: { failure($0, message) }
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

    static func failure(_ status: Int32, _ message: [CChar]) -> CodecError {
        do {
            try ImageDecoder.check(status, message)
            return .corrupt("decoder failed")
        } catch {
            return error
        }
    }

    /// Reads batches of rows until the image is complete, feeding the sink;
    /// `color` says how the rows relate to sRGB (a transform runs here, on
    /// each batch, before the sink sees it).
    static func pump<S: ScanlineSink>(width: Int, height: Int, scale: Int, color: ColorHandling = .sRGB,
                                      into sink: inout S,
                                      read: (UnsafeMutableRawPointer, UInt32, UnsafeMutablePointer<UInt32>) -> Int32,
                                      onError: (Int32) -> CodecError) -> Result<DecodeInfo, CodecError> {
        let batch = min(ImageDecoder.batchRows, height)
        var buffer = [UInt8](repeating: 0, count: width * 4 * batch)
        sink.begin(width: width, height: height, color: color.sourceColorSpace)
        let transform: ColorTransform? = if case .transform(let t) = color { t } else { nil }
        var done = 0
        while done < height {
            var got: UInt32 = 0
            let status = buffer.withUnsafeMutableBytes { read($0.baseAddress!, UInt32(min(batch, height - done)), &got) }
            guard status == 0 else { return .failure(onError(status)) }
            guard got > 0 else { return .failure(.corrupt("image data ends early")) }
            if let transform {
                buffer.withUnsafeMutableBytes { transform.convertRGBA(UnsafeMutableRawBufferPointer(rebasing: $0[..<(Int(got) * width * 4)])) }
            }
            buffer.withUnsafeBytes { sink.consume(UnsafeRawBufferPointer(rebasing: $0[..<(Int(got) * width * 4)]), rowCount: Int(got)) }
            done += Int(got)
        }
        return .success(DecodeInfo(width: width, height: height, scaleNumerator: scale))
    }
}

/// Drives one incremental PNG decode through the C shim.
enum PNGSession {
    static func run<S: ScanlineSink>(_ bytes: UnsafeRawBufferPointer, into sink: inout S) -> Result<DecodeInfo, CodecError> {
        var message = [CChar](repeating: 0, count: 256)
        var status: Int32 = 0
        var width: UInt32 = 0, height: UInt32 = 0
        guard let decoder = thumbd_png_open(bytes.baseAddress, bytes.count, &width, &height,
                                            &status, &message, message.count) else {
            return .failure(JPEGSession.failure(status, message))
        }
        defer { thumbd_png_close(decoder) }
        var profile: UnsafeRawPointer?
        var length = 0
        var model: Int32 = 0
        thumbd_png_color(decoder, &profile, &length, &model)
        let color = ColorHandling(profile: UnsafeRawBufferPointer(start: profile, count: profile == nil ? 0 : length),
                                  model: model)
        return JPEGSession.pump(width: Int(width), height: Int(height), scale: 8, color: color, into: &sink) { buffer, max, read in
            thumbd_png_read(decoder, buffer, max, read, &message, message.count)
        } onError: { JPEGSession.failure($0, message) }
    }
}
