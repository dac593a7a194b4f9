import Foundation
import Testing
@testable import ThumbImaging

/// Linear-light colour handling for sources in other RGB spaces: their own
/// curves in the box reducer, their matrix on the small result.
@Suite struct SourceColorSpaceTests {
    private let identity: [Float] = [1, 0, 0, 0, 1, 0, 0, 0, 1]

    private func curves(_ f: (Double) -> Double) -> [Float] {
        (0..<768).map { Float(f(Double($0 % 256) / 255)) }
    }

    private func geometry(_ sw: Int, _ sh: Int, _ w: Int, _ h: Int) throws -> ThumbnailGeometry {
        try ThumbnailGeometry(sourceWidth: sw, sourceHeight: sh, width: w, height: h, fit: .fill, enlarge: false)
    }

    /// sRGB's own curves and no matrix are recognised as sRGB (so an
    /// sRGB-tagged image takes the untouched path); anything else is not.
    @Test func sRGBIsRecognisedAndOtherSpacesAreNot() {
        #expect(SourceColorSpace(curves: curves(SRGB.linear), matrix: identity).isSRGB)
        #expect(!SourceColorSpace(curves: curves { pow($0, 1.8) }, matrix: identity).isSRGB)
        let swapped: [Float] = [0, 1, 0, 1, 0, 0, 0, 0, 1]
        #expect(!SourceColorSpace(curves: curves(SRGB.linear), matrix: swapped).isSRGB)
    }

    /// A flat colour through the renderer equals the analytic conversion:
    /// curve, matrix, clamp, sRGB encode.
    @Test func flatColoursConvertThroughCurveAndMatrix() throws {
        let matrix: [Float] = [1.2249, -0.2247, 0, -0.0420, 1.0419, 0, -0.0197, -0.0786, 1.0979]   // P3 → sRGB
        let space = SourceColorSpace(curves: curves(SRGB.linear), matrix: matrix)
        for colour: [UInt8] in [[200, 100, 50, 255], [240, 20, 20, 255], [90, 160, 220, 128]] {
            let source = Bitmap(width: 40, height: 30, pixels: Array(Array(repeating: colour, count: 1200).joined()))
            let out = ThumbnailRenderer.render(source, orientation: .up, geometry: try geometry(40, 30, 9, 7), color: space)
            let linear = (0..<3).map { SRGB.linear(Double(colour[$0]) / 255) }
            for c in 0..<3 {
                let mixed = (0..<3).reduce(0.0) { $0 + Double(matrix[c * 3 + $1]) * linear[$1] }
                let expected = Int((SRGB.encoded(min(max(mixed, 0), 1)) * 255).rounded())
                #expect(abs(Int(out.pixels[(3 * out.width + 4) * 4 + c]) - expected) <= 1, "\(colour) channel \(c)")
            }
            #expect(out[4, 3].a == colour[3])
        }
    }

    /// Resampling is linear, so converting the small result equals converting
    /// every source pixel first (for colours inside the gamut, where no
    /// clamping intervenes), to within rounding.
    @Test func convertingAfterResamplingEqualsConvertingFirst() throws {
        let matrix: [Float] = [0.9, 0.1, 0, 0.05, 0.9, 0.05, 0, 0.1, 0.9]   // rows sum to 1: stays in gamut
        let space = SourceColorSpace(curves: curves { pow($0, 1.8) }, matrix: matrix)
        var source = Bitmap(width: 160, height: 120)
        var rng = SystemRandomNumberGenerator()
        for i in source.pixels.indices { source.pixels[i] = i % 4 == 3 ? 255 : UInt8.random(in: 0...255, using: &rng) }
        var converted = source
        converted.pixels.withUnsafeMutableBytes { space.convertToSRGB($0) }
        for (w, h) in [(40, 30), (23, 17)] {
            let late = ThumbnailRenderer.render(source, orientation: .up, geometry: try geometry(160, 120, w, h), color: space)
            let early = ThumbnailRenderer.render(converted, orientation: .up, geometry: try geometry(160, 120, w, h))
            let worst = zip(late.pixels, early.pixels).map { abs(Int($0) - Int($1)) }.max()!
            #expect(worst <= 2, "\(w)×\(h)")
        }
        let unconverted = ThumbnailRenderer.render(source, orientation: .up, geometry: try geometry(160, 120, 40, 30))
        let late = ThumbnailRenderer.render(source, orientation: .up, geometry: try geometry(160, 120, 40, 30), color: space)
        #expect(zip(late.pixels, unconverted.pixels).map { abs(Int($0) - Int($1)) }.max()! > 10)
    }
}
