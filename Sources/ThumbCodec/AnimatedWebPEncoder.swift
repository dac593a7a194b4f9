import CThumbCodec
import ThumbImaging

/// An animated WebP (SPEC §14) written frame by frame with libwebpmux's
/// `WebPAnimEncoder`: lossy at the still encoder's quality (alpha kept
/// losslessly), each frame coded against the one before. The frames are not
/// kept, only their encodings: add one, drop it, add the next.
///
/// A class because it owns the C encoder, freed when it goes away whether
/// or not `finish()` ran (a render stopped at its deadline drops it half done).
public final class AnimatedWebPEncoder {
    public let width: Int
    public let height: Int
    /// Frames added so far.
    public private(set) var frames = 0
    /// Frames the finished file holds (`X-Image-Frames`, SPEC §14): libwebp
    /// merges a frame that leaves the canvas unchanged, within the lossy
    /// encoder's tolerance, into the one before (their durations summed), and
    /// writes a still when one frame is left; 1 for a still, 0 before `finish()`.
    public private(set) var encodedFrames = 0
    private var encoder: OpaquePointer?

    /// An encoder of `width`×`height` frames at `quality` (0…100) that plays
    /// `loopCount` times (0 forever; `AnimationFacts.loopCount`'s meaning).
    public init(width: Int, height: Int, quality: Int, loopCount: Int) throws(CodecError) {
        precondition(width > 0 && height > 0, "frame sides must be positive")
        self.width = width
        self.height = height
        var message = [CChar](repeating: 0, count: 256)
        var status: Int32 = 0
        encoder = thumbd_webp_anim_encoder_new(UInt32(width), UInt32(height), Int32(min(100, max(0, quality))),
                                               Int32(min(65535, max(0, loopCount))), &status, &message, message.count)
        if encoder == nil { throw .encodeFailed(messageText(message)) }
    }

    deinit { thumbd_webp_anim_encoder_free(encoder) }

    /// Bytes the encoder holds at its peak for `frames` frames of
    /// `width`×`height` (SPEC §14's "scaled frames", encoded): libwebp's
    /// working set while it adds a frame — WebPAnimEncoder's three canvases,
    /// two candidate sub-frames (dispose none and background) and the VP8
    /// encoder's planes and tables for each — `workingBytesPerPixel` a pixel
    /// plus `workingBytesFixed`; and every encoded frame
    /// (`encodedBytesPerPixel` each of its pixels) three times: kept in the
    /// mux until the end, the assembled file, and its copy handed over —
    /// the mux's frames are freed by then, but into the heap, in pieces the
    /// copy does not fit in, so the resident size still holds them.
    ///
    /// Measured (ThumbBench --animate: resident peak of the encoder alone
    /// fed the frames, after malloc_trim): 100 frames of a photo pan, 0.33
    /// MiB at 64×36 with 104 KB encoded, 1.9 MiB at 160×90 (443 KB), 4.2 MiB
    /// at 320×180 (1.26 MB), 9.5 MiB at 480×270 (2.52 MB); 100 frames of
    /// RGBA noise at 320×180, 29.4 MiB at q 82 (10.0 MB: 1.74 B a pixel) and
    /// 37.5 MiB at q 100 (12.4 MB: 2.16 B a pixel) — 32.3 and 39.3 MiB by
    /// this count with those sizes, 40.7 MiB with its bound.
    public static func estimatedMemory(width: Int, height: Int, frames: Int) -> Int {
        let pixels = width * height
        let encoded = Double(max(1, frames) * pixels) * encodedBytesPerPixel
        return workingBytesFixed + pixels * workingBytesPerPixel + Int((3 * encoded).rounded(.up))
    }

    /// libwebp's working set a pixel of the frame (twelve ARGB pictures' worth).
    static let workingBytesPerPixel = 48
    /// libwebp's working set whatever the size (the VP8 encoder's tables).
    static let workingBytesFixed = 1 << 20
    /// Bytes of lossy WebP a pixel, an upper bound: uniform noise with noisy
    /// alpha at quality 100, method 4 — the worst cwebp 1.2.4 makes — is 2.2
    /// (a photo at quality 82 is about 0.3).
    static let encodedBytesPerPixel = 9.0 / 4.0

    /// Adds the next frame, shown for `durationMilliseconds` (0 stays 0: a
    /// WebP source's 0-ms frame is kept as the source gives it).
    /// Past `deadline` libwebp stops at its next callback with `.deadlineExceeded`.
    public func add(_ frame: Bitmap, durationMilliseconds: Int, deadline: RenderDeadline = .none) throws(CodecError) {
        precondition(frame.width == width && frame.height == height, "every frame has the animation's size")
        guard let encoder else { preconditionFailure("add after finish") }
        var message = [CChar](repeating: 0, count: 256)
        let duration = Int32(min(Int(Int32.max), max(0, durationMilliseconds)))
        let status = frame.pixels.withUnsafeBytes {
            thumbd_webp_anim_encoder_add(encoder, $0.baseAddress, duration, deadline.raw, &message, message.count)
        }
        if status == Int32(THUMBD_DEADLINE) { throw .deadlineExceeded }
        guard status == Int32(THUMBD_OK) else { throw .encodeFailed(messageText(message)) }
        frames += 1
    }

    /// The finished file. The encoder is spent afterwards.
    public func finish() throws(CodecError) -> [UInt8] {
        guard let encoder, frames > 0 else { throw .encodeFailed("an animation needs at least one frame") }
        defer {
            thumbd_webp_anim_encoder_free(encoder)
            self.encoder = nil
        }
        let bytes = try EncodedBuffer.take { out, length, message, size in
            thumbd_webp_anim_encoder_finish(encoder, out, length, message, size)
        }
        // Counted in the file, not guessed from what was added: which frames libwebp merged is its choice.
        encodedFrames = max(1, bytes.withUnsafeBytes { WebPStructure.animationFrames($0) })
        return bytes
    }
}
