
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
        _ = try walk(bytes, format: format)
    }

    /// The walk, returning what the ISOBMFF walk learnt for the probe (which
    /// library decodes the file, how many grid tiles); nil for other formats.
    static func walk(_ bytes: UnsafeRawBufferPointer, format: ImageFormat) throws(CodecError) -> ISOBMFFLayout? {
        switch format {
        case .jpeg: try JPEGStructure.walk(bytes)
        case .png: try PNGStructure.walk(bytes)
        case .gif: try GIFStructure.walk(bytes)
        case .avif, .heic: return try ISOBMFFStructure.walk(bytes, format: format)
        case .webp: break   // RIFF chunks: libwebp's parsers are linear and keep nothing per chunk
        case .jxl: try JXLStructure.walk(bytes)
        }
        return nil
    }

    static func walk(_ bytes: [UInt8], format: ImageFormat) throws(CodecError) -> ISOBMFFLayout? {
        let result: Result<ISOBMFFLayout?, CodecError> = bytes.withUnsafeBytes { buffer in
            do throws(CodecError) { return .success(try walk(buffer, format: format)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    public static func check(_ bytes: [UInt8], format: ImageFormat) throws(CodecError) {
        // withUnsafeBytes rethrows untyped: carry the typed error out as a Result.
        let result: Result<Void, CodecError> = bytes.withUnsafeBytes { buffer in
            do throws(CodecError) { try check(buffer, format: format); return .success(()) } catch { return .failure(error) }
        }
        try result.get()
    }
}
