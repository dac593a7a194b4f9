/// A decoded image: 8-bit RGBA, straight (non-premultiplied) alpha, row-major,
/// top row first, no row padding (stride = `width * 4`).
///
/// This is the "prepared bitmap" of API.md § Output and the `rgba` output format.
/// Its pixels are `byteCount` (width·height·4) of its cost in a cache.
public struct Bitmap: Sendable, Equatable {
    /// Pixels per row.
    public let width: Int
    /// Rows.
    public let height: Int
    /// `width * height * 4` bytes, R G B A per pixel.
    public var pixels: [UInt8]

    /// Wraps existing pixels; `pixels.count` must be `width * height * 4`.
    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width > 0 && height > 0, "bitmap sides must be positive")
        precondition(pixels.count == width * height * 4, "pixel buffer does not match size")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// A transparent black bitmap.
    public init(width: Int, height: Int) {
        self.init(width: width, height: height,
                  pixels: [UInt8](repeating: 0, count: width * height * 4))
    }

    /// Bytes per row.
    public var stride: Int { width * 4 }

    /// Bytes of pixels (a cache counts its buffer's capacity, and more, as its cost).
    public var byteCount: Int { pixels.count }

    /// True when every pixel has alpha 255 (API.md § Output: `auto` picks JPEG then).
    public var isOpaque: Bool {
        pixels.withUnsafeBufferPointer { p in
            var i = 3
            let n = p.count
            // AND-reduce so the loop has no early exit and vectorises.
            var acc: UInt8 = 255
            while i < n {
                acc &= p[i]
                i += 4
            }
            return acc == 255
        }
    }

    /// The RGBA value at (x, y), for tests and diagnostics.
    public subscript(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
        let o = (y * width + x) * 4
        return (pixels[o], pixels[o + 1], pixels[o + 2], pixels[o + 3])
    }
}
