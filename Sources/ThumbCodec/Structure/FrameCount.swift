/// A source's frame count for `/info` (SPEC § 12 `frames`, and `animated`
/// when it is 2 or more), found by walking the file's block structure
/// without decoding any image data, so that `/info` on a long animation
/// costs a pass over its bytes rather than a decode of every frame.
public enum FrameCount {
    /// The frames of `bytes` read as `format`; never less than 1.
    ///
    /// - GIF: the image descriptors, counted by GIFStructure's walk (header,
    ///   screen descriptor, global colour table, then the blocks up to the
    ///   trailer or the first byte that is not a block — where giflib, which
    ///   decodes GIFs here, stops too; ImageMagick and gifsicle skip such bytes
    ///   and can count more frames in a corrupt file).
    /// - WebP: the `ANMF` chunks when the first chunk is a `VP8X` with the
    ///   animation flag set (WebPStructure); a still WebP, lossy or lossless,
    ///   simple or extended, is 1.
    /// - JPEG XL: the displayed frames libjxl reports while skipping every
    ///   frame's sections by its table of contents (`thumbd_jxl_probe`, no
    ///   pixel decoded), up to `JXLStructure.maxFrames` + 1; a file libjxl
    ///   cannot read to its first frame header counts 1.
    /// - JPEG, PNG, AVIF, HEIC: 1 (an AVIF or HEIF sequence reports its
    ///   primary image).
    ///
    /// A truncated file counts the frames whose header is whole: a GIF image
    /// descriptor's introducer and its 9 bytes, a WebP `ANMF` chunk's 8-byte
    /// header and its 16-byte frame header — whether or not the image data
    /// after them is. A GIF with more than `GIFStructure.maxFrames` (100 000)
    /// descriptors gives that cap (the walk stops there; StructureWalk refuses
    /// such a file before any decode), and one with more than
    /// `maxExtensions` extension blocks the frames before the walk stopped.
    /// The work is linear in the file's size whatever its sizes and counts say.
    public static func of(_ bytes: UnsafeRawBufferPointer, format: ImageFormat) -> Int {
        let counted = switch format {
        case .gif: GIFStructure.census(bytes).frames
        case .webp: WebPStructure.animationFrames(bytes)
        case .jxl: JXLProbe.frames(bytes)
        case .jpeg, .png, .avif, .heic: 1
        }
        return max(1, counted)
    }

    public static func of(_ bytes: [UInt8], format: ImageFormat) -> Int {
        bytes.withUnsafeBytes { of($0, format: format) }
    }
}
