extension Bitmap {
    /// The bitmap composited over opaque white: for formats without alpha.
    /// Blending is in gamma space, as browsers composite.
    public func flattened() -> Bitmap {
        if isOpaque { return self }
        var out = self
        out.pixels.withUnsafeMutableBufferPointer { p in
            var i = 0
            while i < p.count {
                let a = UInt32(p[i + 3])
                let inv = 255 - a
                for c in 0..<3 {
                    p[i + c] = UInt8((UInt32(p[i + c]) * a + 255 * inv + 127) / 255)
                }
                p[i + 3] = 255
                i += 4
            }
        }
        return out
    }
}
