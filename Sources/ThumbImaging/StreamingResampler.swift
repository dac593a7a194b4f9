/// Lanczos-3 resampling of streamed RGBA8 rows, for a decode with no box step
/// (less than twice the target on both axes: a 12 MP photo at w=1500): each
/// row enters linear light, is resampled across as it arrives, and is added
/// into the result rows whose kernels cover it. Only the result and two rows
/// are held — where `BoxReducer` then `Resampler` held the whole decode as
/// floats (16 bytes a pixel, 214 MB for 12 MP) and its horizontal pass.
///
/// The same values as `BoxReducer` (blocks of one) then `Resampler.resize`:
/// the same conversion, the same weights, and every result pixel sums its
/// source rows in the same order.
struct StreamingResampler {
    let sourceWidth: Int
    let sourceHeight: Int
    let width: Int
    let height: Int
    /// The result, row-major, premultiplied linear RGBA; complete once every row arrived.
    private(set) var output: [SIMD4<Float>]
    private var line: [SIMD4<Float>]
    private var across: [SIMD4<Float>]
    private let horizontal: FilterWeights
    private let vertical: FilterWeights
    private let toLinear16: [UInt32]
    private var sourceRow = 0
    /// The first result row whose kernel still reaches `sourceRow` or beyond.
    private var firstOpenRow = 0

    init(sourceWidth: Int, sourceHeight: Int, width: Int, height: Int,
         toLinear16: [UInt32] = SourceColorSpace.sRGB.toLinear16) {
        precondition(toLinear16.count == 768)
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.width = width
        self.height = height
        self.toLinear16 = toLinear16
        horizontal = FilterWeights(inputSize: sourceWidth, outputSize: width)
        vertical = FilterWeights(inputSize: sourceHeight, outputSize: height)
        output = [SIMD4<Float>](repeating: .zero, count: width * height)
        line = [SIMD4<Float>](repeating: .zero, count: sourceWidth)
        across = [SIMD4<Float>](repeating: .zero, count: width)
    }

    var isComplete: Bool { sourceRow == sourceHeight }

    /// Bytes held besides the result: the row in linear light and its resampled copy.
    static func rowBytes(sourceWidth: Int, width: Int) -> Int { (sourceWidth + width) * 16 }

    mutating func consume(_ rows: UnsafeRawBufferPointer, rowCount: Int) {
        for r in 0..<rowCount where sourceRow < sourceHeight {
            let row = rows.baseAddress!.advanced(by: r * sourceWidth * 4).assumingMemoryBound(to: UInt8.self)
            linearise(row)
            resampleAcross()
            addDown()
            sourceRow += 1
        }
    }

    /// As `BoxReducer` converts a block of one pixel.
    private mutating func linearise(_ row: UnsafePointer<UInt8>) {
        let colourScale = 1 / (Float(1) * 65535 * 255), alphaScale = Float(1) * 255
        toLinear16.withUnsafeBufferPointer { lut in
            line.withUnsafeMutableBufferPointer { out in
                for x in 0..<sourceWidth {
                    let p = row + x * 4
                    let alpha = UInt32(p[3])
                    out[x] = SIMD4(Float(lut[Int(p[0])] &* alpha) * colourScale,
                                   Float(lut[256 + Int(p[1])] &* alpha) * colourScale,
                                   Float(lut[512 + Int(p[2])] &* alpha) * colourScale, Float(alpha) / alphaScale)
                }
            }
        }
    }

    /// `Resampler.resize`'s horizontal pass on one row.
    private mutating func resampleAcross() {
        let taps = horizontal.taps
        line.withUnsafeBufferPointer { src in
            across.withUnsafeMutableBufferPointer { dst in
                horizontal.start.withUnsafeBufferPointer { start in
                    horizontal.count.withUnsafeBufferPointer { count in
                        horizontal.weights.withUnsafeBufferPointer { weights in
                            for x in 0..<dst.count {
                                var acc = SIMD4<Float>.zero
                                let w = weights.baseAddress! + x * taps
                                let s = src.baseAddress! + start[x]
                                for k in 0..<count[x] { acc += s[k] * w[k] }
                                dst[x] = acc
                            }
                        }
                    }
                }
            }
        }
    }

    /// `Resampler.resize`'s vertical pass, turned around: this source row is
    /// added into every result row whose kernel covers it, each result row
    /// receiving its source rows top to bottom as the whole-image pass adds them.
    private mutating func addDown() {
        let j = sourceRow, width = self.width, taps = vertical.taps
        while firstOpenRow < height && vertical.start[firstOpenRow] + vertical.count[firstOpenRow] <= j { firstOpenRow += 1 }
        across.withUnsafeBufferPointer { row in
            output.withUnsafeMutableBufferPointer { dst in
                var y = firstOpenRow
                while y < height && vertical.start[y] <= j {
                    let k = j - vertical.start[y]
                    if k < vertical.count[y] {
                        let w = vertical.weights[y * taps + k]
                        let out = dst.baseAddress! + y * width
                        for x in 0..<width { out[x] += row[x] * w }
                    }
                    y += 1
                }
            }
        }
    }
}
