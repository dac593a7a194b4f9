/// What an animated GIF or WebP is, read from its block structure without
/// decoding a frame (SPEC §14): enough to refuse it (`maxAnimationPixels`),
/// to estimate its decode's memory, and to start the encoder with its loop
/// count before the first frame arrives.
public struct AnimationFacts: Sendable, Equatable, Codable {
    /// The frames in the file (FrameCount's count: 2 or more here).
    public let frames: Int
    /// How many times the animation plays, in WebP's meaning: 0 forever, n
    /// n times. A GIF's NETSCAPE count n becomes n + 1 (n repeats after the
    /// first play), except 0 = forever; a GIF without the extension plays
    /// once — as gif2webp converts them. A WebP's `ANIM` count as it is.
    public let loopCount: Int
    /// The reader keeps a second canvas: a GIF with a frame to be restored
    /// ("previous" disposal); every WebP (WebPAnimDecoder always holds the
    /// previous canvas after disposal).
    public let holdsPreviousCanvas: Bool

    public init(frames: Int, loopCount: Int, holdsPreviousCanvas: Bool) {
        self.frames = frames
        self.loopCount = loopCount
        self.holdsPreviousCanvas = holdsPreviousCanvas
    }

    /// The facts of `bytes` read as `format`, or nil for a still image (one
    /// frame, or a format that does not animate here: JPEG, PNG, AVIF and
    /// HEIC sequences give their primary image; a JPEG XL animation gives
    /// its first frame in every format, SPEC §14). Linear in the file's size.
    public static func of(_ bytes: UnsafeRawBufferPointer, format: ImageFormat) -> AnimationFacts? {
        switch format {
        case .gif:
            let census = GIFStructure.census(bytes)
            guard census.frames >= 2 else { return nil }
            return AnimationFacts(frames: census.frames, loopCount: webPLoopCount(gif: census.loopCount),
                                  holdsPreviousCanvas: census.restoresPrevious)
        case .webp:
            let walk = WebPStructure.animation(bytes)
            guard walk.frames >= 2 else { return nil }
            return AnimationFacts(frames: walk.frames, loopCount: walk.loopCount, holdsPreviousCanvas: true)
        case .jpeg, .png, .avif, .heic, .jxl:
            return nil
        }
    }

    public static func of(_ bytes: [UInt8], format: ImageFormat) -> AnimationFacts? {
        bytes.withUnsafeBytes { of($0, format: format) }
    }

    /// gif2webp's rule: no extension, once; 0, forever; n, n + 1 plays
    /// (WebP's count is 16 bits: 65535 stays 65535).
    static func webPLoopCount(gif count: Int?) -> Int {
        guard let count else { return 1 }
        return count == 0 ? 0 : min(count + 1, 65535)
    }
}
