/// Streams RGBA8 rows in and averages each `kx`×`ky` block of pixels into one,
/// in linear light with premultiplied alpha, so a huge source never has to
/// exist whole: memory is the reduced image plus one row of sums.
///
/// Samples enter linear light through the source's tone curves (sRGB's, or
/// an embedded profile's; see `SourceColorSpace`).
///
/// Sums are integers (linear values 0…65535 times alpha 0…255), exact and
/// cheaper than floating point per source pixel; each finished block becomes
/// one `SIMD4<Float>` (premultiplied linear R, G, B and alpha, all 0…1).
struct BoxReducer {
    let sourceWidth: Int
    let sourceHeight: Int
    let kx: Int
    let ky: Int
    let width: Int
    let height: Int
    /// Reduced image, row-major, premultiplied linear RGBA.
    private(set) var output: [SIMD4<Float>]
    private var sums: [UInt64]
    /// R, G and B tables back to back: sample → linear 0…65535.
    private let toLinear16: [UInt32]
    private var rowsInBlock = 0
    private var outputRow = 0
    private var sourceRow = 0

    init(sourceWidth: Int, sourceHeight: Int, kx: Int, ky: Int, toLinear16: [UInt32] = SourceColorSpace.sRGB.toLinear16) {
        precondition(kx >= 1 && ky >= 1 && toLinear16.count == 768)
        self.toLinear16 = toLinear16
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.kx = kx
        self.ky = ky
        width = (sourceWidth + kx - 1) / kx
        height = (sourceHeight + ky - 1) / ky
        output = [SIMD4<Float>](repeating: .zero, count: width * height)
        sums = [UInt64](repeating: 0, count: width * 4)
    }

    var isComplete: Bool { sourceRow == sourceHeight }

    mutating func consume(_ rows: UnsafeRawBufferPointer, rowCount: Int) {
        if kx == 1 && ky == 1 { return consumeUnreduced(rows, rowCount: rowCount) }
        let rowBytes = sourceWidth * 4
        toLinear16.withUnsafeBufferPointer { lut in
            for r in 0..<rowCount where sourceRow < sourceHeight {
                let row = rows.baseAddress!.advanced(by: r * rowBytes).assumingMemoryBound(to: UInt8.self)
                accumulate(row, lut)
                rowsInBlock += 1
                sourceRow += 1
                if rowsInBlock == ky || sourceRow == sourceHeight { emitBlockRow() }
            }
        }
    }

    /// A source less than twice the target on both axes (every frame of a
    /// small animation): each pixel is a block of one, converted straight to
    /// the values `emitBlockRow` gives such a block (same operations, same
    /// floats) without the round trip through the sums.
    private mutating func consumeUnreduced(_ rows: UnsafeRawBufferPointer, rowCount: Int) {
        let width = sourceWidth
        let n = Float(1)
        let colourScale = 1 / (n * 65535 * 255), alphaScale = n * 255
        toLinear16.withUnsafeBufferPointer { lut in
            output.withUnsafeMutableBufferPointer { out in
                for r in 0..<rowCount where sourceRow < sourceHeight {
                    let row = rows.baseAddress!.advanced(by: r * width * 4).assumingMemoryBound(to: UInt8.self)
                    let base = sourceRow * width
                    for x in 0..<width {
                        let p = row + x * 4
                        let alpha = UInt32(p[3])
                        out[base + x] = SIMD4(Float(lut[Int(p[0])] &* alpha) * colourScale,
                                              Float(lut[256 + Int(p[1])] &* alpha) * colourScale,
                                              Float(lut[512 + Int(p[2])] &* alpha) * colourScale, Float(alpha) / alphaScale)
                    }
                    sourceRow += 1
                    outputRow += 1
                }
            }
        }
    }

    private mutating func accumulate(_ row: UnsafePointer<UInt8>, _ lut: UnsafeBufferPointer<UInt32>) {
        let kx = self.kx, sourceWidth = self.sourceWidth
        sums.withUnsafeMutableBufferPointer { s in
            var x = 0
            var block = 0
            while x < sourceWidth {
                let end = min(x + kx, sourceWidth)
                var r: UInt64 = 0, g: UInt64 = 0, b: UInt64 = 0, a: UInt64 = 0
                var p = row + x * 4
                for _ in x..<end {
                    let alpha = UInt32(p[3])
                    r &+= UInt64(lut[Int(p[0])] &* alpha)
                    g &+= UInt64(lut[256 + Int(p[1])] &* alpha)
                    b &+= UInt64(lut[512 + Int(p[2])] &* alpha)
                    a &+= UInt64(alpha)
                    p += 4
                }
                s[block * 4] &+= r
                s[block * 4 + 1] &+= g
                s[block * 4 + 2] &+= b
                s[block * 4 + 3] &+= a
                x = end
                block += 1
            }
        }
    }

    private mutating func emitBlockRow() {
        let rows = rowsInBlock
        let base = outputRow * width
        let width = self.width, kx = self.kx, sourceWidth = self.sourceWidth
        output.withUnsafeMutableBufferPointer { out in
            sums.withUnsafeMutableBufferPointer { s in
                for block in 0..<width {
                    let columns = min(kx, sourceWidth - block * kx)
                    let n = Float(columns * rows)
                    let colourScale = 1 / (n * 65535 * 255)
                    out[base + block] = SIMD4(Float(s[block * 4]) * colourScale, Float(s[block * 4 + 1]) * colourScale,
                                              Float(s[block * 4 + 2]) * colourScale, Float(s[block * 4 + 3]) / (n * 255))
                    s[block * 4] = 0
                    s[block * 4 + 1] = 0
                    s[block * 4 + 2] = 0
                    s[block * 4 + 3] = 0
                }
            }
        }
        rowsInBlock = 0
        outputRow += 1
    }
}
