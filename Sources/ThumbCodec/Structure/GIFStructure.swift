/// The GIF structure walk (StructureWalk); its limits are named here and in
/// SourcesAndLimits.md § Structure limits.
///
/// Header, logical screen descriptor and global colour table, then the
/// blocks in order up to the trailer: image descriptors (with a local colour
/// table, then LZW data in sub-blocks) and extensions (sub-blocks). Only
/// counts are refused: a truncated file, a missing trailer or an unknown
/// block is giflib's to judge for the first frame, and an animation ends at
/// such damage after its first frame (AnimationDecoder, as browsers show
/// it), so refusing it would turn away GIFs that decode (many real ones end
/// without a trailer or with junk).
///
/// The limits are about structures that cost without bound, not about
/// animation policy (`limits.maxAnimationFrames`, far below them, says how
/// many frames a render may use).
enum GIFStructure {
    /// Image descriptors (frames). giflib keeps a `SavedImage` record, and a
    /// copy of the local colour table, for every descriptor it reads until
    /// the file is closed (`DGifGetImageDesc`), so a reader of frames grows
    /// with their count. Real animations have up to a few thousand frames;
    /// 100 000 is over an hour at 25 frames a second.
    static let maxFrames = 100_000

    /// Extension blocks (graphic control, comment, application, plain text).
    /// giflib reads each one before the first frame in its probe and in its
    /// decode (`walk_to_image` in gif.c); real files have one graphic control
    /// extension per frame plus a few others.
    static let maxExtensions = 2 * maxFrames

    /// What one walk found: the frames whose image descriptor (introducer
    /// and 9 bytes) is whole, and the limit it stopped at, if any; for an
    /// animation (AnimationFacts), the loop count and whether any frame is
    /// to be restored after it.
    struct Census {
        var frames = 0
        var refusal: CodecError?
        /// The count of the last NETSCAPE2.0 (or ANIMEXTS1.0) application
        /// extension, as gif2webp reads it; nil without one.
        var loopCount: Int?
        /// A graphic control extension with disposal 3 ("restore previous"),
        /// or 4, which browsers read so: the reader then keeps the pixels under a frame.
        var restoresPrevious = false
    }

    static func walk(_ bytes: UnsafeRawBufferPointer) throws(CodecError) {
        if let refusal = census(bytes).refusal { throw refusal }
    }

    /// The walk itself, shared by the check above and FrameCount: it stops at
    /// the end of the data, at anything but a block, or at the first count
    /// past a limit (with the refusal, and `frames` then `maxFrames` at most).
    static func census(_ bytes: UnsafeRawBufferPointer) -> Census {
        var census = Census()
        var reader = StructureReader(bytes)
        guard let header = reader.sub(6),
              Array(header.bytes) == Array("GIF87a".utf8) || Array(header.bytes) == Array("GIF89a".utf8),
              reader.skip(4), let screenFlags = reader.u8(), reader.skip(2),
              skipColorTable(flags: screenFlags, &reader) else { return census }
        var extensions = 0
        while let introducer = reader.u8() {
            switch introducer {
            case 0x2C:   // image descriptor: left, top, width, height, flags; table; LZW minimum code size; data
                if census.frames == maxFrames {
                    census.refusal = .tooComplex("GIF has more than \(maxFrames) frames")
                    return census
                }
                guard reader.skip(8), let flags = reader.u8() else { return census }
                census.frames += 1
                guard skipColorTable(flags: flags, &reader), reader.skip(1), skipSubBlocks(&reader) else { return census }
            case 0x21:   // extension: label, sub-blocks
                extensions += 1
                if extensions > maxExtensions {
                    census.refusal = .tooComplex("GIF has more than \(maxExtensions) extension blocks")
                    return census
                }
                guard let label = reader.u8() else { return census }
                noteAnimation(label: label, at: reader, in: &census)
                guard skipSubBlocks(&reader) else { return census }
            default:
                return census   // the trailer (0x3B), or a byte giflib refuses if it ever reads this far
            }
        }
        return census
    }

    /// What an extension's first sub-blocks say about the animation: a
    /// graphic control extension's disposal (bits 2–4 of its flags), a
    /// NETSCAPE2.0/ANIMEXTS1.0 application extension's loop count (sub-block
    /// 1, 2 bytes little-endian). Reads a copy of the cursor: the caller skips the blocks.
    private static func noteAnimation(label: UInt8, at cursor: StructureReader, in census: inout Census) {
        var reader = cursor
        switch label {
        case 0xF9:
            guard let size = reader.u8(), size >= 4, let flags = reader.u8() else { return }
            let disposal = (flags >> 2) & 7
            if disposal == 3 || disposal == 4 { census.restoresPrevious = true }
        case 0xFF:
            guard reader.u8() == 11, let name = reader.sub(11),
                  netscape.elementsEqual(name.bytes) || animexts.elementsEqual(name.bytes),
                  let size = reader.u8(), size >= 3, reader.u8() == 1, let count = reader.u16le() else { return }
            census.loopCount = Int(count)
        default:
            return
        }
    }

    private static let netscape = Array("NETSCAPE2.0".utf8)
    private static let animexts = Array("ANIMEXTS1.0".utf8)

    /// The colour table a descriptor's flags announce (3·2^(n+1) bytes), if any.
    private static func skipColorTable(flags: UInt8, _ reader: inout StructureReader) -> Bool {
        flags & 0x80 == 0 || reader.skip(3 << (Int(flags & 7) + 1))
    }

    /// Data sub-blocks up to the empty one that ends them; false at the end of the data.
    private static func skipSubBlocks(_ reader: inout StructureReader) -> Bool {
        while let size = reader.u8() {
            if size == 0 { return true }
            guard reader.skip(Int(size)) else { return false }
        }
        return false
    }
}
