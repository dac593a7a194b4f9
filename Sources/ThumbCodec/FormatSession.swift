import CThumbCodec
import ThumbImaging

/// Drives one WebP, GIF or HEIF/AVIF decode through the C shim's common
/// decoder (open, read rows in batches, close), like `JPEGSession`.
enum FormatSession {
    static func run<S: ScanlineSink>(_ bytes: UnsafeRawBufferPointer, header: ImageHeader, scaleNumerator: Int,
                                     thumbnail: ISOBMFFThumbnail? = nil, deadline: RenderDeadline,
                                     tileThreads: Int = 1, into sink: inout S) -> Result<DecodeInfo, CodecError> {
        var message = [CChar](repeating: 0, count: 256)
        var status: Int32 = 0
        var width: UInt32 = 0, height: UInt32 = 0
        var opened: OpaquePointer?
        var thumbnailItem: UInt32?
        switch header.format {
        case .webp:
            opened = thumbd_webp_open(bytes.baseAddress, bytes.count, Int32(scaleNumerator),
                                      &width, &height, &status, &message, message.count)
        case .gif:
            opened = thumbd_gif_open(bytes.baseAddress, bytes.count, &width, &height, &status, &message, message.count)
        case .avif, .heic:
            let libheif = header.isobmff?.usesLibheif == true
            let limit = UInt64(max(0, header.pixelLimit))
            if let thumbnail {
                opened = openThumbnail(bytes, thumbnail, header: header, libheif: libheif, tileThreads: tileThreads,
                                       width: &width, height: &height)
                if opened != nil { thumbnailItem = thumbnail.item }
                // A thumbnail that fails is no reason to refuse the image: its primary is decoded
                // as without one (API.md § Formats read, "Embedded thumbnails") — unless time is up.
                if opened == nil, deadline.hasPassed { return .failure(.deadlineExceeded) }
            }
            if opened == nil {
                // The library the probe used (ImageDecoder.probe).
                opened = libheif
                    ? thumbd_heif_open(bytes.baseAddress, bytes.count, limit, Int32(tileThreads), &width, &height,
                                       &status, &message, message.count)
                    : thumbd_avif_open(bytes.baseAddress, bytes.count, limit, &width, &height, &status, &message,
                                       message.count)
            }
        case .jpeg, .png, .jxl:
            preconditionFailure("\(header.format) has its own session")
        }
        guard let decoder = opened else { return .failure(RowPump.failure(status, message)) }
        defer { thumbd_decoder_close(decoder) }
        thumbd_decoder_set_deadline(decoder, deadline.raw)
        // Only WebP scales; anything else reports full size (a thumbnail: its own).
        let scale = (Int(width) == header.width && Int(height) == header.height) || thumbnailItem != nil ? 8 : scaleNumerator
        let result = RowPump.run(width: Int(width), height: Int(height), scale: scale, color: colorHandling(decoder),
                                 into: &sink) { buffer, max, read in
            thumbd_decoder_read(decoder, buffer, max, read, &message, message.count)
        } onError: { RowPump.failure($0, message) }
        return result.map { info in
            var info = info
            info.thumbnailItem = thumbnailItem
            return info
        }
    }

    /// Opens `thumbnail` with the library that decodes the primary (libheif
    /// reads thumbnail items itself; libavif through `ISOBMFFPrimarySwap`),
    /// or nil when it cannot be decoded, whatever the reason.
    private static func openThumbnail(_ bytes: UnsafeRawBufferPointer, _ thumbnail: ISOBMFFThumbnail, header: ImageHeader,
                                      libheif: Bool, tileThreads: Int, width: inout UInt32,
                                      height: inout UInt32) -> OpaquePointer? {
        var item = thumbd_thumbnail()
        item.item = thumbnail.item
        item.width = UInt32(thumbnail.width)
        item.height = UInt32(thumbnail.height)
        if let swap = header.isobmff?.primarySwap {
            item.meta_offset = UInt64(swap.meta.lowerBound)
            item.meta_length = UInt64(swap.meta.count)
            item.primary_id_offset = UInt64(swap.primaryIDOffset)
            item.primary_id_size = UInt32(swap.primaryIDSize)
            item.reference_type_offset = UInt64(thumbnail.referenceTypeOffset)
        }
        var status: Int32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let limit = UInt64(max(0, header.pixelLimit))
        if libheif {
            return thumbd_heif_open_thumbnail(bytes.baseAddress, bytes.count, limit, Int32(tileThreads), &item, &width, &height,
                                              &status, &message, message.count)
        }
        guard item.primary_id_size != 0 else { return nil }
        return thumbd_avif_open_thumbnail(bytes.baseAddress, bytes.count, limit, &item, &width, &height,
                                          &status, &message, message.count)
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
