extension Bitmap {
    /// `contain`'s result (SPEC §3.1): a `width`×`height` canvas filled with
    /// `background`, this bitmap composited over it with its top-left corner at
    /// (`x`, `y`). The bitmap must fit on the canvas.
    ///
    /// A nil `background` is transparent black (0, 0, 0, 0) and the bitmap's
    /// pixels are copied unchanged, so a transparent `contain` pads without
    /// touching the image. Otherwise each pixel is the bitmap's source-over the
    /// background with straight alpha, in gamma space as browsers composite and
    /// as `flattened(onto:)` does: over an opaque background the two give the
    /// same bytes. A fully opaque pixel stays itself, a fully transparent one
    /// shows the background as it is.
    public func placed(onCanvasWidth canvasWidth: Int, height canvasHeight: Int, x: Int, y: Int,
                       background: RGBAColor?) -> Bitmap {
        precondition(x >= 0 && y >= 0 && x + width <= canvasWidth && y + height <= canvasHeight,
                     "bitmap outside the canvas")
        let bg = background ?? .transparent
        var canvas = Bitmap(width: canvasWidth, height: canvasHeight,
                            pixels: Self.filled(count: canvasWidth * canvasHeight, with: bg))
        // Source-over a transparent canvas is the source itself, and so is an
        // opaque source over anything: both are plain row copies.
        let copies = background == nil || isOpaque
        let rowBytes = stride
        pixels.withUnsafeBufferPointer { src in
            canvas.pixels.withUnsafeMutableBufferPointer { dst in
                for row in 0..<height {
                    let s = row * rowBytes, d = ((y + row) * canvasWidth + x) * 4
                    if copies {
                        dst.baseAddress!.advanced(by: d)
                            .update(from: src.baseAddress!.advanced(by: s), count: rowBytes)
                    } else {
                        var i = 0
                        while i < rowBytes {
                            Self.compositeOver(src, s + i, dst, d + i)
                            i += 4
                        }
                    }
                }
            }
        }
        return canvas
    }

    /// `count` pixels of `color`.
    private static func filled(count: Int, with color: RGBAColor) -> [UInt8] {
        if color == .transparent { return [UInt8](repeating: 0, count: count * 4) }
        return [UInt8](unsafeUninitializedCapacity: count * 4) { buffer, initialized in
            var i = 0
            while i < count * 4 {
                buffer[i] = color.r
                buffer[i + 1] = color.g
                buffer[i + 2] = color.b
                buffer[i + 3] = color.a
                i += 4
            }
            initialized = count * 4
        }
    }

    /// Straight-alpha source-over of the source pixel at `s` onto the
    /// destination pixel at `d`, in place. Weights are in 1/255² of full
    /// coverage: the source's a·255, the background's b·(255 − a); the result's
    /// alpha is their sum, its colour their weighted mean, both rounded to
    /// nearest. With b = 255 the sum is 255² and this is exactly
    /// `flattened(onto:)`'s (c·a + bg·(255 − a) + 127) / 255.
    @inline(__always)
    private static func compositeOver(_ src: UnsafeBufferPointer<UInt8>, _ s: Int,
                                      _ dst: UnsafeMutableBufferPointer<UInt8>, _ d: Int) {
        let a = UInt32(src[s + 3]), b = UInt32(dst[d + 3])
        let ws = a * 255, wb = b * (255 - a)
        let total = ws + wb
        // Nothing over nothing: the background (alpha 0) stays as it is.
        guard total > 0 else { return }
        for c in 0..<3 {
            dst[d + c] = UInt8((UInt32(src[s + c]) * ws + UInt32(dst[d + c]) * wb + total / 2) / total)
        }
        dst[d + 3] = UInt8((total + 127) / 255)
    }
}
