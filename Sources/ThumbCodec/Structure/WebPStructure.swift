/// The RIFF chunk walk of a WebP file (the container of
/// developers.google.com/speed/webp/docs/riff_container): a 12-byte
/// `RIFF` size `WEBP` header, then chunks of a fourcc, a little-endian
/// 32-bit payload size and the payload, padded to an even length.
///
/// StructureWalk does not use it (libwebp's parsers are linear and keep
/// nothing per chunk); FrameCount does, to count an animation's frames
/// without libwebpdemux building its frame list.
enum WebPStructure {
    /// The `ANMF` chunks at the top level whose chunk header and 16-byte
    /// frame header (position, size, duration, flags) are in the data, if
    /// the first chunk is a `VP8X` with the animation flag set; 0 otherwise
    /// (a simple `VP8 `/`VP8L` file, an extended still, or not a WebP).
    ///
    /// Like libwebpdemux, nothing past the end the RIFF size gives is read,
    /// and a RIFF size past the end of the data is a truncated file. Every
    /// chunk moves the walk on by at least its 8-byte header, so the work is
    /// at most one step per 8 bytes whatever the sizes say; sizes are 32-bit
    /// values widened to Int (64-bit), so 0xFFFFFFFF plus padding cannot
    /// overflow.
    static func animationFrames(_ bytes: UnsafeRawBufferPointer) -> Int {
        animation(bytes).frames
    }

    /// The same walk, with the loop count of the `ANIM` chunk (its bytes 4
    /// and 5, little-endian: 0 = forever) when it is whole; 0 without one,
    /// as libwebpdemux reads it.
    static func animation(_ bytes: UnsafeRawBufferPointer) -> (frames: Int, loopCount: Int) {
        var reader = StructureReader(bytes)
        guard reader.u32be() == riff, let riffSize = u32le(&reader), reader.u32be() == webp else { return (0, 0) }
        let end = min(bytes.count, 8 + Int(riffSize))
        guard end > 12 else { return (0, 0) }
        var chunks = StructureReader(UnsafeRawBufferPointer(rebasing: bytes[12..<end]))
        var isFirst = true
        var frames = 0
        var loopCount = 0
        while let type = chunks.u32be(), let size = u32le(&chunks) {
            // The payload as far as the data holds it: a truncated last chunk is read as far as it goes.
            let whole = min(Int(size), chunks.remaining)
            var payload = StructureReader(UnsafeRawBufferPointer(rebasing: chunks.bytes[chunks.offset..<chunks.offset + whole]))
            if isFirst {
                isFirst = false
                guard type == vp8x, Int(size) >= vp8xSize, let flags = payload.u8(), flags & animationFlag != 0 else {
                    return (0, 0)
                }
            } else if type == anmf, Int(size) >= anmfHeaderSize, payload.remaining >= anmfHeaderSize {
                frames += 1
            } else if type == anim, payload.skip(4), let count = payload.u16le() {
                loopCount = Int(count)
            }
            guard chunks.skip(Int(size) + Int(size & 1)) else { break }
        }
        return (frames, loopCount)
    }

    private static let riff = FourCC("RIFF").rawValue
    private static let webp = FourCC("WEBP").rawValue
    private static let vp8x = FourCC("VP8X").rawValue
    private static let anmf = FourCC("ANMF").rawValue
    private static let anim = FourCC("ANIM").rawValue
    /// The VP8X payload: flags (4 bytes), canvas width − 1 and height − 1 (3 bytes each).
    private static let vp8xSize = 10
    /// ANMF's frame header before the frame's own chunks: X/2, Y/2, width − 1, height − 1, duration (3 bytes each), flags.
    private static let anmfHeaderSize = 16
    /// Bit 1 of the VP8X flags (libwebp's `ANIMATION_FLAG`).
    private static let animationFlag: UInt8 = 0x02

    private static func u32le(_ reader: inout StructureReader) -> UInt32? {
        guard let low = reader.u16le(), let high = reader.u16le() else { return nil }
        return UInt32(high) << 16 | UInt32(low)
    }
}
