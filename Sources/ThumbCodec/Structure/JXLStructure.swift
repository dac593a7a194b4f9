import CThumbCodec

/// JPEG XL before libjxl sees it (SourcesAndLimits.md § Structure limits).
///
/// A bare codestream (`FF 0A`) has nothing to walk here: libjxl parses its
/// headers itself in time linear in their size, and the probe reads only
/// those (`thumbd_jxl_probe`). The ISOBMFF container's top-level boxes are
/// walked: each must end inside the file, there are at most `maxBoxes`, and
/// the codestream is there — one `jxlc` box, or `jxlp` parts and no `jxlc`.
/// libjxl skips the metadata boxes (Exif, XMP, `brob`) unread: thumbd asks
/// for none, and the orientation is the codestream's.
enum JXLStructure {
    /// Top-level boxes of a container. Real files: `JXL `, `ftyp`, `jxll`,
    /// Exif, XMP, a `jxli` frame index and one `jxlc` — or a few hundred
    /// `jxlp` parts from a streaming writer. libjxl keeps no state per box,
    /// but each is a return from its box loop: the count bounds the walk's
    /// and libjxl's per-box work on a file of empty boxes.
    static let maxBoxes = 4_096
    /// Displayed frames the probe counts (as GIFStructure.maxFrames): past
    /// it the file is refused. Every frame header is a pass through libjxl's
    /// frame-skipping code; a render decodes the first frame only.
    static let maxFrames = 100_000

    static func walk(_ bytes: UnsafeRawBufferPointer) throws(CodecError) {
        guard bytes.count >= 2, bytes[0] != 0xFF else { return }   // a bare codestream
        var boxes = ISOBMFFBoxes(bytes, in: 0..<bytes.count)
        var count = 0
        var codestream = 0, parts = 0
        while let box = try boxes.next(counting: &count) {
            guard count <= maxBoxes else { throw .tooComplex("JPEG XL container has more than \(maxBoxes) boxes") }
            if count == 1, box.type != FourCC("JXL ") { throw .corrupt("JPEG XL container does not open with its signature box") }
            if box.type == FourCC("jxlc") { codestream += 1 }
            if box.type == FourCC("jxlp") { parts += 1 }
        }
        guard codestream + parts > 0 else { throw .corrupt("JPEG XL container holds no codestream box") }
        guard codestream <= 1, codestream == 0 || parts == 0 else {
            throw .corrupt("JPEG XL container holds more than one codestream")
        }
    }
}
