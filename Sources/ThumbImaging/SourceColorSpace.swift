/// How a decoder's 8-bit RGB samples become linear-light sRGB: a tone curve
/// per channel to the source's linear light, then a 3×3 matrix to linear sRGB
/// (API.md § Output "Colour"; what a matrix/TRC ICC profile describes).
///
/// The curves replace the sRGB → linear table where samples enter linear
/// light (the box reducer), and the matrix is applied to the small resampled
/// result just before the linear → sRGB encode: resampling is linear, so
/// M·(Σ wᵢ·cᵢ) = Σ wᵢ·(M·cᵢ), and converting a 12 MP source costs no more than
/// converting its thumbnail. Out-of-gamut results are clamped there.
public struct SourceColorSpace: Sendable, Equatable {
    /// 3 × 256 entries (R, then G, then B): sample → linear light scaled to
    /// 0…65535, the reducer's integer domain.
    let toLinear16: [UInt32]
    /// Row-major 3×3, source linear RGB → linear sRGB; nil for the identity.
    let matrix: [Float]?
    /// True when the samples are already sRGB and need no conversion.
    public let isSRGB: Bool

    /// The samples are sRGB: what untagged images and ignored profiles get.
    public static let sRGB = SourceColorSpace(toLinear16: SRGB.toLinear16 + SRGB.toLinear16 + SRGB.toLinear16,
                                              matrix: nil, isSRGB: true)

    private init(toLinear16: [UInt32], matrix: [Float]?, isSRGB: Bool) {
        self.toLinear16 = toLinear16
        self.matrix = matrix
        self.isSRGB = isSRGB
    }

    /// `curves`: 768 values, linear light 0…1 of each 8-bit sample for R, G
    /// and B in turn. `matrix`: 9 values, row-major, source linear RGB →
    /// linear sRGB. A space that reproduces sRGB to within half a step at
    /// 8 bits (an sRGB-tagged image) becomes exactly `.sRGB`, so it renders
    /// bit-identically to an untagged one.
    public init(curves: [Float], matrix: [Float]) {
        precondition(curves.count == 768 && matrix.count == 9, "3×256 curve entries and a 3×3 matrix")
        let identity: [Float] = [1, 0, 0, 0, 1, 0, 0, 0, 1]
        let matrixIsIdentity = zip(matrix, identity).allSatisfy { abs($0 - $1) < 1e-3 }
        let curvesAreSRGB = curves.enumerated().allSatisfy { i, v in
            abs(SRGB.encoded(Double(min(max(v, 0), 1))) * 255 - Double(i % 256)) < 0.5
        }
        if matrixIsIdentity && curvesAreSRGB {
            self = .sRGB
            return
        }
        self.init(toLinear16: curves.map { UInt32((Double(min(max($0, 0), 1)) * 65535).rounded()) },
                  matrix: matrixIsIdentity ? nil : matrix, isSRGB: false)
    }

    /// Linear light (0…1, unclamped) of source linear `rgb` in sRGB primaries.
    @inline(__always)
    func toSRGBPrimaries(_ rgb: SIMD4<Float>) -> SIMD4<Float> {
        guard let m = matrix else { return rgb }
        return SIMD4(m[0] * rgb.x + m[1] * rgb.y + m[2] * rgb.z,
                     m[3] * rgb.x + m[4] * rgb.y + m[5] * rgb.z,
                     m[6] * rgb.x + m[7] * rgb.y + m[8] * rgb.z, rgb.w)
    }

    /// Converts RGBA8 pixels to sRGB in place, one by one (alpha untouched):
    /// for full-size decodes, where there is no small result to convert.
    public func convertToSRGB(_ pixels: UnsafeMutableRawBufferPointer) {
        guard !isSRGB else { return }
        let top = Float(SRGB.fromLinearSize - 1)
        let p = pixels.bindMemory(to: UInt8.self)
        toLinear16.withUnsafeBufferPointer { lut in
            SRGB.fromLinear.withUnsafeBufferPointer { encode in
                var i = 0
                while i + 3 < p.count {
                    let linear = SIMD4<Float>(Float(lut[Int(p[i])]), Float(lut[256 + Int(p[i + 1])]),
                                              Float(lut[512 + Int(p[i + 2])]), 0) / 65535
                    let c = toSRGBPrimaries(linear).clamped(lowerBound: .zero, upperBound: SIMD4(repeating: 1))
                    p[i] = encode[Int(c.x * top + 0.5)]
                    p[i + 1] = encode[Int(c.y * top + 0.5)]
                    p[i + 2] = encode[Int(c.z * top + 0.5)]
                    i += 4
                }
            }
        }
    }
}
