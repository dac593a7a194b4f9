/// Separable resampling of premultiplied linear RGBA (`SIMD4<Float>` per
/// pixel): horizontal pass, then vertical, with precomputed weights.
enum Resampler {
    static func resize(_ input: [SIMD4<Float>], width: Int, height: Int,
                       toWidth outWidth: Int, toHeight outHeight: Int) -> [SIMD4<Float>] {
        if width == outWidth && height == outHeight { return input }
        let horizontal = FilterWeights(inputSize: width, outputSize: outWidth)
        var mid = [SIMD4<Float>](repeating: .zero, count: outWidth * height)
        input.withUnsafeBufferPointer { src in
            mid.withUnsafeMutableBufferPointer { dst in
                horizontal.start.withUnsafeBufferPointer { start in
                    horizontal.count.withUnsafeBufferPointer { count in
                        horizontal.weights.withUnsafeBufferPointer { weights in
                            for y in 0..<height {
                                let row = src.baseAddress! + y * width
                                let out = dst.baseAddress! + y * outWidth
                                for x in 0..<outWidth {
                                    var acc = SIMD4<Float>.zero
                                    let w = weights.baseAddress! + x * horizontal.taps
                                    let s = row + start[x]
                                    for k in 0..<count[x] { acc += s[k] * w[k] }
                                    out[x] = acc
                                }
                            }
                        }
                    }
                }
            }
        }
        let vertical = FilterWeights(inputSize: height, outputSize: outHeight)
        var result = [SIMD4<Float>](repeating: .zero, count: outWidth * outHeight)
        mid.withUnsafeBufferPointer { src in
            result.withUnsafeMutableBufferPointer { dst in
                for y in 0..<outHeight {
                    let out = dst.baseAddress! + y * outWidth
                    let first = vertical.start[y]
                    for k in 0..<vertical.count[y] {
                        let w = vertical.weights[y * vertical.taps + k]
                        let row = src.baseAddress! + (first + k) * outWidth
                        for x in 0..<outWidth { out[x] += row[x] * w }
                    }
                }
            }
        }
        return result
    }
}
