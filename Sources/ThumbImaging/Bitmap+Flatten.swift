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
        let bg = background.overWhite
        let back = (UInt32(bg.r), UInt32(bg.g), UInt32(bg.b))
        var out = self
        out.pixels.withUnsafeMutableBufferPointer { p in
            var i = 0
            while i < p.count {
                let a = UInt32(p[i + 3])
                let inv = 255 - a
                p[i] = UInt8((UInt32(p[i]) * a + back.0 * inv + 127) / 255)
                p[i + 1] = UInt8((UInt32(p[i + 1]) * a + back.1 * inv + 127) / 255)
                p[i + 2] = UInt8((UInt32(p[i + 2]) * a + back.2 * inv + 127) / 255)
                p[i + 3] = 255
                i += 4
            }
        }
        return out
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
