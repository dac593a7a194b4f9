import CThumbCodec
import ThumbImaging

/// Drives one WebP, GIF or HEIF/AVIF decode through the C shim's common
/// decoder (open, read rows in batches, close), like `JPEGSession`.
enum FormatSession {
    static func run<S: ScanlineSink>(_ bytes: UnsafeRawBufferPointer, header: ImageHeader, scaleNumerator: Int,
                                     deadline: RenderDeadline, into sink: inout S) -> Result<DecodeInfo, CodecError> {
        var message = [CChar](repeating: 0, count: 256)
        var status: Int32 = 0
        var width: UInt32 = 0, height: UInt32 = 0
        let opened: OpaquePointer?
        switch header.format {
        case .webp:
            opened = thumbd_webp_open(bytes.baseAddress, bytes.count, Int32(scaleNumerator),
                                      &width, &height, &status, &message, message.count)
        case .gif:
            opened = thumbd_gif_open(bytes.baseAddress, bytes.count, &width, &height, &status, &message, message.count)
        case .avif, .heic:
            // The library the probe used (ImageDecoder.probe).
            let open = header.isobmff?.usesLibheif == true ? thumbd_heif_open : thumbd_avif_open
            opened = open(bytes.baseAddress, bytes.count, UInt64(max(0, header.pixelLimit)),
                          &width, &height, &status, &message, message.count)
        case .jpeg, .png:
            preconditionFailure("\(header.format) has its own session")
        }
        guard let decoder = opened else { return .failure(RowPump.failure(status, message)) }
        defer { thumbd_decoder_close(decoder) }
        thumbd_decoder_set_deadline(decoder, deadline.raw)
        // Only WebP scales; anything else reports full size.
        let scale = Int(width) == header.width && Int(height) == header.height ? 8 : scaleNumerator
        return RowPump.run(width: Int(width), height: Int(height), scale: scale, color: colorHandling(decoder),
                           into: &sink) { buffer, max, read in
            thumbd_decoder_read(decoder, buffer, max, read, &message, message.count)
        } onError: { RowPump.failure($0, message) }
    }

    /// WebP `ICCP` or HEIF `colr` ICC profile (the pixels are RGB), else
    /// HEIF `nclx`; GIF carries neither.
    private static func colorHandling(_ decoder: OpaquePointer) -> ColorHandling {
        var profile: UnsafeRawPointer?
        var length = 0
        var nclx = thumbd_nclx()
        thumbd_decoder_color(decoder, &profile, &length, &nclx)
        let bytes = UnsafeRawBufferPointer(start: profile, count: profile == nil ? 0 : length)
        return ColorHandling(usableProfile: bytes, model: Int32(THUMBD_RGB)) ?? ColorHandling(nclx: nclx)
    }
}
