import CThumbCodec
import ThumbImaging

/// How a decode went: the size actually produced (JPEGs and WebPs may be
/// decoded at a reduced scale, AVIF and HEIC from an embedded thumbnail).
public struct DecodeInfo: Sendable, Equatable {
    public let width: Int
    public let height: Int
    /// M of the M/8 scale (JPEG DCT scaling, WebP shrink on load); 8 for full size.
    public let scaleNumerator: Int
    /// The item ID of the AVIF/HEIC thumbnail decoded instead of the primary
    /// image (`ImageDecoder.embeddedThumbnail`); nil for the primary.
    public var thumbnailItem: UInt32? = nil
}

/// Sniffs, probes and decodes PNG, JPEG, WebP, GIF, AVIF, HEIC and (when
/// allowed) JPEG XL into RGBA8 scanlines.
///
/// Decoding takes the `ImageHeader` that `probe` returned, and only `probe`
/// can make one — after checking `maxPixels` — so no pixel buffer can be
/// allocated for an image that is too large.
public enum ImageDecoder {
    /// Rows handed to the sink per call: libjpeg's natural batch, small enough
    /// to stay in cache.
    static let batchRows = 16

    /// Reads the header: format by magic bytes, size, orientation, alpha,
    /// progressive/interlaced. Refuses more than `maxPixels` pixels (for GIF
    /// and animated WebP the size is the logical screen / canvas).
    /// Starts what a library starts on first use (libheif's codecs and
    /// plugins), so that a sandboxed worker has it before it may open no file.
    public static func startLibraries() {
        thumbd_heif_start()
    }

    /// JPEG XL only with `allowJPEGXL` (`limits.jpegXLSources`, default
    /// false: SPEC §3.2; `thumbd thumbnail` always allows it); without it a
    /// JPEG XL file is `unsupportedFormat`, as any format thumbd does not read.
    /// A JPEG XL header's facts come from libjxl's basic info, its frame
    /// count from the frame events after it (no pixel decoded; more than
    /// `JXLStructure.maxFrames` is `tooComplex`).
    public static func probe(_ data: [UInt8], maxPixels: Int, allowJPEGXL: Bool = false) throws(CodecError) -> ImageHeader {
        guard !data.isEmpty else { throw .empty }
        guard let format = ImageFormat.sniff(data), format != .jxl || allowJPEGXL else {
            throw .unsupportedFormat("not a PNG, JPEG, WebP, GIF, AVIF or HEIC image")
        }
        // Before any library parses it (StructureWalk). For AVIF and HEIC the
        // walk also says which library decodes the file: libheif only when
        // every image it would decode is HEVC.
        let isobmff = try StructureWalk.walk(data, format: format)
        let libheif = isobmff?.usesLibheif ?? false
        var info = thumbd_image_info()
        var message = [CChar](repeating: 0, count: 256)
        let limit = UInt64(max(0, maxPixels))
        var frames: Int?
        if format == .jxl {
            let result: Result<(thumbd_image_info, frames: Int), CodecError> = data.withUnsafeBytes { bytes in
                do throws(CodecError) { return .success(try JXLProbe.probe(bytes, maxPixels: maxPixels)) } catch {
                    return .failure(error)
                }
            }
            (info, frames) = try result.get()
            guard frames! <= JXLStructure.maxFrames else {
                throw .tooComplex("JPEG XL has more than \(JXLStructure.maxFrames) frames")
            }
        }
        let status = data.withUnsafeBytes { bytes in
            switch format {
            case .jpeg: thumbd_jpeg_probe(bytes.baseAddress, bytes.count, &info, &message, message.count)
            case .png: thumbd_png_probe(bytes.baseAddress, bytes.count, &info, &message, message.count)
            case .webp: thumbd_webp_probe(bytes.baseAddress, bytes.count, limit, &info, &message, message.count)
            case .gif: thumbd_gif_probe(bytes.baseAddress, bytes.count, limit, &info, &message, message.count)
            case .avif, .heic:
                libheif ? thumbd_heif_probe(bytes.baseAddress, bytes.count, limit, &info, &message, message.count)
                        : thumbd_avif_probe(bytes.baseAddress, bytes.count, limit, &info, &message, message.count)
            case .jxl: Int32(THUMBD_OK)   // probed above
            }
        }
        if status == Int32(THUMBD_TOO_LARGE) { throw .tooLarge(width: Int(info.width), height: Int(info.height)) }
        try check(status, message)
        // Another pass over a GIF's blocks or a WebP's chunks (linear, nothing kept).
        let animation = format == .gif || format == .webp ? AnimationFacts.of(data, format: format) : nil
        let header = ImageHeader(format: format, info: info, pixelLimit: maxPixels, isobmff: isobmff, animation: animation,
                                 frames: frames)
        guard header.width > 0, header.height > 0 else { throw .corrupt("image has no pixels") }
        guard header.width.multipliedReportingOverflow(by: header.height).partialValue <= maxPixels,
              header.width <= 1 << 20, header.height <= 1 << 20 else {
            throw .tooLarge(width: header.width, height: header.height)
        }
        return header
    }

    /// The smallest M in 1…8 such that a JPEG decoded at M/8 still covers the
    /// minimum displayed size on both axes (orientations 5–8 swap the axes).
    public static func jpegScaleNumerator(width: Int, height: Int, orientation: Orientation,
                                          minimumDisplayedWidth: Int, minimumDisplayedHeight: Int) -> Int {
        let (needW, needH) = orientation.swapsAxes
            ? (minimumDisplayedHeight, minimumDisplayedWidth) : (minimumDisplayedWidth, minimumDisplayedHeight)
        for m in 1...8 where scaled(width, m) >= needW && scaled(height, m) >= needH {
            return m
        }
        return 8
    }

    /// The M/8 scale a decode of `header` uses: the JPEG rule for JPEGs and for
    /// still opaque WebPs (libwebp's scaler, also in gamma space); 8 otherwise.
    public static func scaleNumerator(header: ImageHeader, minimumDisplayedSize: (width: Int, height: Int)?) -> Int {
        guard let size = minimumDisplayedSize else { return 8 }
        switch header.format {
        case .jpeg: break
        case .webp where !header.isAnimated && !header.hasAlpha: break
        default: return 8
        }
        return jpegScaleNumerator(width: header.width, height: header.height, orientation: header.orientation,
                                  minimumDisplayedWidth: size.width, minimumDisplayedHeight: size.height)
    }

    /// libjpeg's (and our WebP) output size for a side at M/8: ceil(side·M/8).
    static func scaled(_ side: Int, _ m: Int) -> Int { (side * m + 7) / 8 }

    /// The size a decode for `minimumDisplayedSize` delivers its rows at (JPEG
    /// and opaque still WebP decode at a reduced scale; the rest whole).
    public static func decodedSize(header: ImageHeader,
                                   minimumDisplayedSize: (width: Int, height: Int)?) -> (width: Int, height: Int) {
        let m = scaleNumerator(header: header, minimumDisplayedSize: minimumDisplayedSize)
        return (scaled(header.width, m), scaled(header.height, m))
    }

    /// Bytes a decode is estimated to need at its peak: the decoded bitmap at
    /// the chosen scale, plus what the decoder holds besides — the whole
    /// coefficient buffer of a progressive JPEG (2 bytes per coefficient,
    /// every component at full size as an upper bound), the whole image of an
    /// interlaced PNG, the ARGB image of a lossless WebP or the alpha plane of
    /// a lossy one, the palette indices of an interlaced GIF, and the decoded
    /// planes of an AVIF or HEIC image (see `avifWorkingBytes`, `heifWorkingBytes`).
    /// An AVIF or HEIC render that decodes an embedded thumbnail is still
    /// estimated for its primary image: it decodes the primary when the
    /// thumbnail fails, and the thumbnail's own `ispe` is the file's word.
    public static func estimatedDecodeMemory(header: ImageHeader,
                                             minimumDisplayedSize: (width: Int, height: Int)?) -> Int {
        let pixels = header.width * header.height
        let m = scaleNumerator(header: header, minimumDisplayedSize: minimumDisplayedSize)
        let decoded = scaled(header.width, m) * scaled(header.height, m) * 4
        switch header.format {
        case .png:
            return decoded + (header.isProgressive ? pixels * 4 : 0)
        case .jpeg:
            return decoded + (header.isProgressive ? pixels * header.components * 2 : 0)
        case .webp:
            return decoded + (header.isLossless ? pixels * 4 : header.hasAlpha ? pixels : 0)
        case .gif:
            return decoded + (header.isProgressive ? pixels : 0)
        case .avif, .heic:
            return decoded + (header.isobmff?.usesLibheif == true ? heifWorkingBytes(header) : avifWorkingBytes(header))
        case .jxl:
            return decoded + jxlWorkingBytes(header)
        }
    }

    /// libjxl 0.7 decodes the first frame whole inside open into thumbd's
    /// RGBA8 copy (`decoded`, which the rows are then read from, so it counts
    /// twice), from its own float planes: 4 bytes a sample for the colour
    /// channels and each extra channel, plus its group buffers and (XYB) the
    /// DC image. A first, generous bound: the whole `ThumbBench --jxl-efforts`
    /// process (decode, 512-px scale, encodes) peaked at 137 MB RSS for a
    /// 4224×3168 lossy (XYB) JPEG XL and 151 MB for a lossless one, where
    /// this estimates 343 MB; to be tightened with peaks above an idle process.
    static func jxlWorkingBytes(_ header: ImageHeader) -> Int {
        header.width * header.height * (4 + jxlWorkingBytesPerPixel + (header.hasAlpha ? 4 : 0))
    }

    /// libjxl's own bytes per pixel beyond the RGBA8 output (JXLSession).
    static let jxlWorkingBytesPerPixel = 16

    /// The codec's YCbCr planes: 4:4:4 as the upper bound, 2 bytes per sample
    /// above 8 bits, plus alpha.
    static func planeBytes(_ header: ImageHeader) -> Int {
        header.width * header.height * (header.bitDepth > 8 ? 2 : 1) * (header.hasAlpha ? 4 : 3)
    }

    /// libavif keeps dav1d's planes and converts them to RGBA a band of rows
    /// at a time; a grid image adds its assembled copy of the tiles' planes
    /// (half again the 4:4:4 bound covers a 4:2:0 grid). Measured peaks (RSS
    /// above an idle process) of 12 MP (4224×3168) sources against this
    /// working estimate: 35 MB for 4:2:2 8-bit (60 MB estimated), 48 MB
    /// 4:4:4 (60), 50 MB a 2×2 4:2:0 grid (60), 48 MB 4:2:0 10-bit (120),
    /// 43 MB 4:2:0 with alpha (80); 6 MB for a 2048×858 4:4:4 one (8; dav1d
    /// adds a few MB per decoder whatever the size).
    ///
    /// libavif 0.11 also keeps a dav1d decoder and its picture for every grid
    /// tile (colour and alpha) until the grid is assembled: `avifTileBytes`
    /// each, counted from the structure walk's tile count. Measured (peak RSS
    /// of `thumbd thumbnail --w 256` above that of a 64×64 AVIF) for one
    /// 2048×1536 4:4:4 8-bit picture, 12 MB as a single image: 25 MB in 12
    /// tiles of 512 px (32 MB estimated), 39 MB in 48 tiles of 256 px (51),
    /// 93 MB in 192 of 128 px (123), 331 MB in 768 of 64 px (411): 0.40 MB a
    /// tile, 0.42 MB at 10 bits, 0.39 MB in 4:2:0, whatever the tile's size
    /// (dav1d's per-decoder state dominates); 1.75 GB for 4096 tiles of 64 px
    /// all pointing at one 27-byte frame (the estimate: 2.2 GB).
    ///
    /// An embedded thumbnail decoded instead has at most a quarter of the
    /// primary's pixels (`embeddedThumbnail`), so at most half its planes
    /// whatever its depth; a grid of a few tiles adds their decoders, counted here.
    static func avifWorkingBytes(_ header: ImageHeader) -> Int {
        let thumbnailTiles = header.isobmff?.thumbnails.map(\.tiles).max() ?? 0
        return planeBytes(header) * 3 / 2 + ((header.isobmff?.tiles ?? 0) + thumbnailTiles) * avifTileBytes
    }

    /// A grid tile's dav1d decoder and picture held by libavif, with a margin
    /// over the 0.40–0.43 MB measured (`avifWorkingBytes`).
    static let avifTileBytes = 512 << 10

    /// libheif decodes the whole image: libde265's planes, libheif's copy of
    /// them, and one more when it turns or mirrors them (irot/imir); they are
    /// converted to RGBA a band of rows at a time. Layouts the band converter
    /// does not take (RGB-coded, 16-bit) get libheif's whole RGBA image, for
    /// more than 8 bits after a 16-bit one. Measured peaks (RSS above an idle
    /// process) against this estimate: 72 MB for a 12 MP 4:2:0 HEIC (120 MB
    /// estimated), 89 MB for 4:4:4 (120), 5 MB for a 1440×960 4:2:0 grid (12).
    /// Unlike libavif, libheif 1.15 decodes a grid's tiles one at a time (a
    /// libde265 decoder each, freed before the next) into its grid image, so
    /// tiles cost time, not memory: 16 MB for a 2048×2048 grid of 1024 tiles
    /// (54 estimated), 111 MB for a 4512×4512 one of 19 881 (264).
    static func heifWorkingBytes(_ header: ImageHeader) -> Int {
        3 * planeBytes(header) + (header.bitDepth > 8 ? header.width * header.height * 8 : 0)
            + (tileThreads(header: header) - 1) * heifTileThreadBytes
    }

    /// Threads a decode of `header` can use (`decode`'s `tileThreads`): libheif
    /// 1.15 decodes a grid's tiles in parallel (nothing else), up to
    /// THUMBD_HEIF_MAX_TILE_THREADS; every other decode runs on its one thread.
    /// A job gets this many at most, fewer when fewer workers are idle as it starts.
    public static func tileThreads(header: ImageHeader) -> Int {
        guard let layout = header.isobmff, layout.usesLibheif, layout.tiles > 1 else { return 1 }
        return min(Int(THUMBD_HEIF_MAX_TILE_THREADS), layout.tiles)
    }

    /// What each tile thread beyond the first holds while it decodes: a
    /// libde265 decoder with its tile's pictures (a 512×512 tile's planes are
    /// under 1 MB; the decoder's tables a few MB more).
    static let heifTileThreadBytes = 8 << 20

    /// Decodes into `sink`, top row first, in stored orientation (AVIF/HEIC:
    /// with irot/imir applied); a JPEG or a still opaque WebP at the smallest
    /// M/8 scale that still covers `minimumDisplayedSize`. Past `deadline` the
    /// decode stops at its next row or scan with `CodecError.deadlineExceeded`.
    ///
    /// With `useEmbeddedThumbnail`, an AVIF or HEIC image decodes the
    /// thumbnail item `embeddedThumbnail` chooses for `minimumDisplayedSize`,
    /// if any — and its primary image when that thumbnail fails to decode.
    /// Renders ask for it; the canonical decode of an original's facts
    /// (`/info`) never does, so facts never depend on a thumbnail.
    @discardableResult
    public static func decode<S: ScanlineSink>(_ data: [UInt8], header: ImageHeader,
                                               minimumDisplayedSize: (width: Int, height: Int)?,
                                               useEmbeddedThumbnail: Bool = false,
                                               deadline: RenderDeadline = .none,
                                               tileThreads: Int = 1,
                                               into sink: inout S) throws(CodecError) -> DecodeInfo {
        let m = scaleNumerator(header: header, minimumDisplayedSize: minimumDisplayedSize)
        let thumbnail = useEmbeddedThumbnail
            ? embeddedThumbnail(header: header, minimumDisplayedSize: minimumDisplayedSize) : nil
        let result: Result<DecodeInfo, CodecError> = data.withUnsafeBytes { bytes in
            switch header.format {
            case .jpeg: JPEGSession.run(bytes, scaleNumerator: m, deadline: deadline, into: &sink)
            case .png: PNGSession.run(bytes, deadline: deadline, into: &sink)
            case .webp, .gif, .avif, .heic:
                FormatSession.run(bytes, header: header, scaleNumerator: m, thumbnail: thumbnail, deadline: deadline,
                                  tileThreads: tileThreads, into: &sink)
            case .jxl: JXLSession.run(bytes, header: header, deadline: deadline, into: &sink)
            }
        }
        return try result.get()
    }

    /// Decodes the whole image into a bitmap (stored orientation).
    public static func decodeBitmap(_ data: [UInt8], maxPixels: Int,
                                    minimumDisplayedSize: (width: Int, height: Int)? = nil,
                                    useEmbeddedThumbnail: Bool = false,
                                    allowJPEGXL: Bool = false,
                                    deadline: RenderDeadline = .none)
        throws(CodecError) -> (bitmap: Bitmap, header: ImageHeader) {
        let header = try probe(data, maxPixels: maxPixels, allowJPEGXL: allowJPEGXL)
        var sink = BitmapSink()
        try decode(data, header: header, minimumDisplayedSize: minimumDisplayedSize,
                   useEmbeddedThumbnail: useEmbeddedThumbnail, deadline: deadline, into: &sink)
        guard let bitmap = sink.bitmap() else { throw .corrupt("decoder produced fewer rows than announced") }
        return (bitmap, header)
    }

    static func check(_ status: Int32, _ message: [CChar]) throws(CodecError) {
        let text = String(cString: message)
        switch status {
        case Int32(THUMBD_OK): return
        case Int32(THUMBD_UNSUPPORTED): throw .unsupportedFormat(text)
        case Int32(THUMBD_CORRUPT): throw .corrupt(text.isEmpty ? "undecodable image data" : text)
        case Int32(THUMBD_NO_MEMORY): throw .corrupt("out of memory: \(text)")
        case Int32(THUMBD_DEADLINE): throw .deadlineExceeded
        default: throw .corrupt(text)
        }
    }
}
