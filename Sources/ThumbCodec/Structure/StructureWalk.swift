/// The walk every source takes before any codec library sees it
/// (SourcesAndLimits.md § Structure limits).
///
/// Why: the libraries are quadratic in some structures (libjpeg's marker
/// list, libavif's `ipma` parser, libheif's item look-ups), keep memory per
/// structure (libpng's inflated text, a dav1d decoder per AVIF tile), or run
/// for seconds in one uninterruptible call (a HEIC grid of 65 000 tiles). A
/// walk in time linear in the file's size finds those shapes first and
/// refuses them — `tooComplex` (`422 image_too_large`) for counts past a
/// limit no real image reaches, `corrupt` (`422 corrupt_image`) for
/// inconsistencies — so that what a library then does is bounded by the file.
///
/// Each format's walk lives in its own file and owns its named limits.
public enum StructureWalk {
    public static func check(_ bytes: UnsafeRawBufferPointer, format: ImageFormat) throws(CodecError) {
        switch format {
        case .jpeg: try JPEGStructure.walk(bytes)
        case .png: try PNGStructure.walk(bytes)
        case .gif: try GIFStructure.walk(bytes)
        case .avif, .heic: try ISOBMFFStructure.walk(bytes, format: format)
        case .webp: return   // RIFF chunks: libwebp's parsers are linear and keep nothing per chunk
        }
    }

    public static func check(_ bytes: [UInt8], format: ImageFormat) throws(CodecError) {
        // withUnsafeBytes rethrows untyped: carry the typed error out as a Result.
        let result: Result<Void, CodecError> = bytes.withUnsafeBytes { buffer in
            do throws(CodecError) { try check(buffer, format: format); return .success(()) } catch { return .failure(error) }
        }
        try result.get()
    }
}
