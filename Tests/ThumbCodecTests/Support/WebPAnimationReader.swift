import CWebP
import ThumbImaging

/// An animated WebP read with libwebpdemux itself (not thumbd's reader), to
/// check what the encoder wrote: canvas, loop count, and each frame with the
/// time it starts and how long it shows.
struct WebPAnimationReader {
    let width: Int
    let height: Int
    let loopCount: Int
    let frames: [(bitmap: Bitmap, start: Int, duration: Int)]
    /// The frame count the container declares (after libwebp merged identical frames).
    var count: Int { frames.count }

    init?(_ bytes: [UInt8]) {
        var options = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&options) != 0 else { return nil }
        options.color_mode = MODE_RGBA
        let decoded: (Int, Int, Int, [(Bitmap, Int, Int)])? = bytes.withUnsafeBufferPointer { buffer in
            var data = WebPData(bytes: buffer.baseAddress, size: buffer.count)
            guard let decoder = WebPAnimDecoderNew(&data, &options) else { return nil }
            defer { WebPAnimDecoderDelete(decoder) }
            var info = WebPAnimInfo()
            guard WebPAnimDecoderGetInfo(decoder, &info) != 0 else { return nil }
            let w = Int(info.canvas_width), h = Int(info.canvas_height)
            var frames: [(Bitmap, Int, Int)] = []
            var previous: Int32 = 0
            while WebPAnimDecoderHasMoreFrames(decoder) != 0 {
                var pixels: UnsafeMutablePointer<UInt8>?
                var timestamp: Int32 = 0
                guard WebPAnimDecoderGetNext(decoder, &pixels, &timestamp) != 0, let pixels else { return nil }
                let copy = Array(UnsafeBufferPointer(start: pixels, count: w * h * 4))
                frames.append((Bitmap(width: w, height: h, pixels: copy), Int(previous), Int(timestamp - previous)))
                previous = timestamp
            }
            return (w, h, Int(info.loop_count), frames)
        }
        guard let decoded else { return nil }
        (width, height, loopCount) = (decoded.0, decoded.1, decoded.2)
        frames = decoded.3.map { (bitmap: $0.0, start: $0.1, duration: $0.2) }
    }

    /// The frame showing at `time` ms after the start.
    func frame(at time: Int) -> Bitmap? {
        frames.last { $0.start <= time }?.bitmap
    }

    var totalDuration: Int { frames.reduce(0) { $0 + $1.duration } }
}
