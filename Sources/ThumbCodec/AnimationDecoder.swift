import CThumbCodec
import ThumbImaging

/// Decodes an animated GIF or WebP frame by frame (SPEC §14): each frame is
/// composited on the canvas as the source defines and lent to the caller,
/// who scales it before the next one is drawn. Memory is the canvas (and
/// the previous canvas where a disposal needs it), never every frame.
public enum AnimationDecoder {
    /// Decodes the first `maxFrames` frames of `data` (a GIF or WebP whose
    /// `header.animation` is set, or any GIF or WebP, read as frames) in
    /// order, calling `body` with each; the frames after them are never read.
    /// Returns how many frames `body` was given (fewer than the header's
    /// count when the file's tail is damaged: the frames before it stand).
    ///
    /// Past `deadline` it stops with `.deadlineExceeded`: between frames, and
    /// at every row of a GIF frame (WebPAnimDecoder has no hook inside a frame).
    /// An error `body` throws stops the decode and is rethrown.
    @discardableResult
    public static func decode(_ data: [UInt8], header: ImageHeader, maxFrames: Int, deadline: RenderDeadline = .none,
                              _ body: (AnimationFrame) throws(CodecError) -> Void) throws(CodecError) -> Int {
        let result: Result<Int, CodecError> = data.withUnsafeBytes { bytes in
            do throws(CodecError) {
                return .success(try run(bytes, header: header, maxFrames: maxFrames, deadline: deadline, body))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Bytes a frame-by-frame decode of `header`'s first `frames` frames
    /// holds at its peak besides the original (SPEC §14): the canvas, and —
    ///
    /// - GIF: the pixels under a frame to be restored (a canvas, only when a
    ///   frame's disposal is "previous"); giflib's record of every frame read
    ///   (`DGifGetImageDesc` keeps a `SavedImage` and a copy of the local
    ///   colour table per frame until the file is closed); one row of indices.
    /// - WebP: WebPAnimDecoder's previous canvas after disposal, and what
    ///   libwebp allocates to decode one frame — at most a canvas (a lossless
    ///   frame's ARGB image; a lossy frame's alpha plane and row caches are less).
    ///
    /// Measured (ThumbBench --animate, Tests/Benchmarks/anim-bench.sh) against it: see there.
    public static func estimatedMemory(header: ImageHeader, frames: Int) -> Int {
        let canvas = header.width * header.height * 4
        switch header.format {
        case .gif:
            let previous = header.animation?.holdsPreviousCanvas ?? true
            return canvas * (previous ? 2 : 1) + max(1, frames) * gifFrameRecordBytes + gifRowBytes
        case .webp:
            return canvas * 3
        case .jpeg, .png, .avif, .heic, .jxl:
            return canvas
        }
    }

    /// giflib's record of a frame: its `SavedImage` (with the descriptor) and
    /// a local colour table's copy (768 bytes at most), with malloc's overhead.
    static let gifFrameRecordBytes = 1 << 10
    /// One frame row of indices: a GIF side is at most 65 535.
    static let gifRowBytes = 64 << 10

    private static func run(_ bytes: UnsafeRawBufferPointer, header: ImageHeader, maxFrames: Int, deadline: RenderDeadline,
                            _ body: (AnimationFrame) throws(CodecError) -> Void) throws(CodecError) -> Int {
        var message = [CChar](repeating: 0, count: 256)
        var status: Int32 = 0
        var width: UInt32 = 0, height: UInt32 = 0
        let limit = UInt64(max(0, header.pixelLimit))
        let opened: OpaquePointer? = switch header.format {
        case .gif: thumbd_gif_anim_open(bytes.baseAddress, bytes.count, limit, &width, &height, &status, &message, message.count)
        case .webp: thumbd_webp_anim_open(bytes.baseAddress, bytes.count, limit, &width, &height, &status, &message, message.count)
        case .jpeg, .png, .avif, .heic, .jxl: nil
        }
        guard let anim = opened else {
            if header.format != .gif && header.format != .webp {
                throw .unsupportedFormat("\(header.format.rawValue) has no frames to animate")
            }
            throw failure(status, message, width: width, height: height)
        }
        defer { thumbd_anim_close(anim) }
        let color = colorHandling(anim)
        var count = 0
        while count < maxFrames {
            var canvas: UnsafePointer<UInt8>?
            var duration: Int32 = 0
            status = thumbd_anim_next(anim, deadline.raw, &canvas, &duration, &message, message.count)
            if status == Int32(THUMBD_TOO_LARGE) {
                // A frame past the limit (the canvas passed it at open).
                throw .tooComplex(messageText(message))
            }
            guard status == Int32(THUMBD_OK) else { throw failure(status, message, width: width, height: height) }
            guard let canvas else { break }
            let frame = AnimationFrame(index: count, durationMilliseconds: Int(duration), width: Int(width),
                                       height: Int(height),
                                       pixels: UnsafeRawBufferPointer(start: canvas, count: Int(width) * Int(height) * 4),
                                       color: color)
            try body(frame)
            count += 1
        }
        return count
    }

    /// A WebP's `ICCP` profile, as the still decoder applies it; GIF has none.
    private static func colorHandling(_ anim: OpaquePointer) -> ColorHandling {
        var profile: UnsafeRawPointer?
        var length = 0
        thumbd_anim_profile(anim, &profile, &length)
        return ColorHandling(profile: UnsafeRawBufferPointer(start: profile, count: profile == nil ? 0 : length),
                             model: Int32(THUMBD_RGB))
    }

    private static func failure(_ status: Int32, _ message: [CChar], width: UInt32, height: UInt32) -> CodecError {
        if status == Int32(THUMBD_TOO_LARGE) { return .tooLarge(width: Int(width), height: Int(height)) }
        return RowPump.failure(status, message)
    }
}

/// A C shim's NUL-terminated message as a String.
func messageText(_ message: [CChar]) -> String {
    String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
