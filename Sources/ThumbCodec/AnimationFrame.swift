import ThumbImaging

/// One composited frame of an animation, lent to `AnimationDecoder.decode`'s
/// closure: its pixels are the reader's canvas, valid only during that call
/// (the next frame is drawn over them). Scale it with `feed(into:)`, or copy
/// it with `bitmap()`.
public struct AnimationFrame {
    /// 0 for the first frame.
    public let index: Int
    /// How long the frame shows: a GIF's delay (under 20 ms made 100 ms, as
    /// browsers show it) or a WebP frame's duration.
    public let durationMilliseconds: Int
    /// The canvas: a GIF's logical screen, a WebP's canvas.
    public let width: Int
    public let height: Int
    let pixels: UnsafeRawBufferPointer
    let color: ColorHandling

    /// Streams the frame into `sink`, top row first, as a still decode
    /// would: `begin` with the canvas size and the source's colour space,
    /// then its rows (converted first where the profile needs lcms2).
    public func feed<S: ScanlineSink>(into sink: inout S) {
        sink.begin(width: width, height: height, color: color.sourceColorSpace)
        guard case .transform(let transform) = color else {
            // The canvas itself: no copy for sRGB and matrix/TRC sources.
            sink.consume(pixels, rowCount: height)
            return
        }
        let rowBytes = width * 4
        let batch = min(ImageDecoder.batchRows, height)
        var buffer = [UInt8](repeating: 0, count: rowBytes * batch)
        var done = 0
        while done < height {
            let rows = min(batch, height - done)
            buffer.withUnsafeMutableBytes { out in
                let part = UnsafeMutableRawBufferPointer(rebasing: out[..<(rows * rowBytes)])
                part.copyMemory(from: UnsafeRawBufferPointer(rebasing: pixels[(done * rowBytes)..<((done + rows) * rowBytes)]))
                transform.convertRGBA(part)
                sink.consume(UnsafeRawBufferPointer(part), rowCount: rows)
            }
            done += rows
        }
    }

    /// A copy of the frame in sRGB (tests and tools; a render feeds a scaler instead).
    public func bitmap() -> Bitmap {
        var sink = BitmapSink()
        feed(into: &sink)
        guard let bitmap = sink.bitmap() else { preconditionFailure("a frame always has every row") }
        return bitmap
    }
}
