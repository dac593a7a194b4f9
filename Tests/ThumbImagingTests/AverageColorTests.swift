import Testing
@testable import ThumbImaging

/// `/info`'s `averageColor` (API.md § /info): alpha-weighted, in linear light.
@Suite struct AverageColorTests {
    private func image(_ pixels: [(UInt8, UInt8, UInt8, UInt8)], width: Int) -> Bitmap {
        Bitmap(width: width, height: pixels.count / width, pixels: pixels.flatMap { [$0.0, $0.1, $0.2, $0.3] })
    }

    @Test func aFlatImageIsItsOwnColour() {
        for c in [(0, 0, 0), (255, 255, 255), (12, 200, 99), (128, 128, 128)] as [(UInt8, UInt8, UInt8)] {
            let flat = image(Array(repeating: (c.0, c.1, c.2, 255), count: 12), width: 4)
            #expect(AverageColor.of(flat) == RGBAColor(r: c.0, g: c.1, b: c.2), "\(c)")
        }
    }

    @Test func blackAndWhiteAverageInLinearLightNotInSRGB() {
        // Half black, half white: linear mean 0.5 is sRGB 188 (not 128, the gamma-space mean).
        let half = image([(0, 0, 0, 255), (255, 255, 255, 255)], width: 2)
        #expect(AverageColor.of(half) == RGBAColor(r: 188, g: 188, b: 188))
        #expect(AverageColor.hex(AverageColor.of(half)) == "#bcbcbc")
    }

    @Test func alphaWeighsAndClearPixelsDoNotCount() {
        // A clear pixel's colour (here vivid red) must not show.
        let withClear = image([(0, 0, 255, 255), (255, 0, 0, 0)], width: 2)
        #expect(AverageColor.of(withClear) == RGBAColor(r: 0, g: 0, b: 255))
        // Weight 255 against 85: three parts blue to one part green in linear light.
        let weighted = image([(0, 0, 255, 255), (0, 255, 0, 85)], width: 2)
        let c = AverageColor.of(weighted)
        #expect(c.b > c.g && c.r == 0, "\(c)")
        #expect(c == RGBAColor(r: 0, g: SRGB.fromLinear[Int(0.25 * 8191 + 0.5)], b: SRGB.fromLinear[Int(0.75 * 8191 + 0.5)]))
        // Nothing visible: #000000.
        #expect(AverageColor.hex(AverageColor.of(image([(9, 9, 9, 0), (200, 3, 4, 0)], width: 1))) == "#000000")
    }
}
