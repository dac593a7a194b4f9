extension Bitmap {
    /// The bitmap as a person sees it, given the EXIF orientation it was
    /// stored with. Orientations 5…8 swap width and height.
    public func oriented(_ orientation: Orientation) -> Bitmap {
        if orientation == .up { return self }
        let w = width, h = height
        let (ow, oh) = orientation.orientedSize(width: w, height: h)
        // Source coordinates of displayed pixel (x, y), per the EXIF definition
        // of where the stored 0th row and 0th column belong.
        let source: (Int, Int) -> (Int, Int)
        switch orientation {
        case .up: source = { ($0, $1) }
        case .upMirrored: source = { (w - 1 - $0, $1) }
        case .down: source = { (w - 1 - $0, h - 1 - $1) }
        case .downMirrored: source = { ($0, h - 1 - $1) }
        case .leftMirrored: source = { ($1, $0) }
        case .right: source = { ($1, h - 1 - $0) }
        case .rightMirrored: source = { (w - 1 - $1, h - 1 - $0) }
        case .left: source = { (w - 1 - $1, $0) }
        }
        var out = [UInt32](repeating: 0, count: ow * oh)
        pixels.withUnsafeBytes { raw in
            let src = raw.bindMemory(to: UInt32.self)
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<oh {
                    for x in 0..<ow {
                        let (sx, sy) = source(x, y)
                        dst[y * ow + x] = src[sy * w + sx]
                    }
                }
            }
        }
        return Bitmap(width: ow, height: oh, pixels: out.withUnsafeBytes { Array($0) })
    }

    /// The `width`×`height` window at (`x`, `y`); it must lie inside the bitmap.
    public func cropped(x: Int, y: Int, width cw: Int, height ch: Int) -> Bitmap {
        precondition(x >= 0 && y >= 0 && x + cw <= width && y + ch <= height, "crop outside the bitmap")
        if x == 0 && y == 0 && cw == width && ch == height { return self }
        var out = [UInt8](repeating: 0, count: cw * ch * 4)
        pixels.withUnsafeBytes { src in
            out.withUnsafeMutableBytes { dst in
                for row in 0..<ch {
                    dst.baseAddress!.advanced(by: row * cw * 4)
                        .copyMemory(from: src.baseAddress!.advanced(by: ((y + row) * width + x) * 4), byteCount: cw * 4)
                }
            }
        }
        return Bitmap(width: cw, height: ch, pixels: out)
    }
}
