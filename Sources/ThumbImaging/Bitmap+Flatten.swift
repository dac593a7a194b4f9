extension Bitmap {
    /// The bitmap composited over an opaque `background` (white by default):
    /// for formats without alpha (JPEG; API.md § Output, `bg`). Blending is
    /// in gamma space, as browsers composite.
    ///
    /// A translucent `background` is first composited over white
    /// (`RGBAColor.overWhite`): JPEG has nowhere to keep its alpha, and
    /// source-over is associative, so the result is what the PNG or WebP
    /// thumbnail over the same `bg` looks like on a white page — the same
    /// white a `bg`-less JPEG flattens onto. An already opaque bitmap is
    /// returned unchanged, whatever the background.
    public func flattened(onto background: RGBAColor = .white) -> Bitmap {
        if isOpaque { return self }
        // The canvas's source-over onto an opaque colour is exactly this
        // flattening (BitmapCanvasTests checks every alpha): one blend, not two.
        return placed(onCanvasWidth: width, height: height, x: 0, y: 0, background: background.overWhite)
    }
}

extension RGBAColor {
    /// This colour composited over opaque white (itself when opaque): what a
    /// format without alpha can show of it, and the colour `flattened(onto:)`
    /// really uses.
    public var overWhite: RGBAColor {
        let a = UInt32(a), inv = 255 - a
        func over(_ c: UInt8) -> UInt8 { UInt8((UInt32(c) * a + 255 * inv + 127) / 255) }
        return RGBAColor(r: over(r), g: over(g), b: over(b))
    }
}
