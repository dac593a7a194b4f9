import Testing
@testable import ThumbImaging

/// A decode with no box step (less than twice the target on both axes) is
/// resampled as its rows arrive: the same floats as the reducer and the
/// two-pass resampler gave, without the decode held whole as floats.
@Suite struct StreamingResamplerTests {
    /// Noise with varied alpha, so every channel and the premultiplication matter.
    private func noise(_ width: Int, _ height: Int, seed: UInt64) -> Bitmap {
        var state = seed
        var bitmap = Bitmap(width: width, height: height)
        for i in 0..<bitmap.pixels.count {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            bitmap.pixels[i] = UInt8(truncatingIfNeeded: state >> 56)
        }
        return bitmap
    }

    @Test(arguments: [(300, 200, 170, 113), (97, 61, 64, 64), (40, 30, 33, 29), (64, 48, 64, 36), (50, 70, 50, 70 - 1)])
    func sameFloatsAsReducingThenResampling(_ size: (Int, Int, Int, Int)) {
        let (sw, sh, tw, th) = size
        let source = noise(sw, sh, seed: UInt64(sw * 1000 + th))
        var reducer = BoxReducer(sourceWidth: sw, sourceHeight: sh, kx: 1, ky: 1)
        var streaming = StreamingResampler(sourceWidth: sw, sourceHeight: sh, width: tw, height: th)
        source.pixels.withUnsafeBytes { rows in
            reducer.consume(rows, rowCount: sh)
            // Rows in uneven batches, as the decoders' row pumps deliver them.
            var row = 0
            for batch in [1, 7, 16, 3] where row < sh {
                let n = min(batch, sh - row)
                streaming.consume(UnsafeRawBufferPointer(rebasing: rows[(row * sw * 4)...]), rowCount: n)
                row += n
            }
            if row < sh { streaming.consume(UnsafeRawBufferPointer(rebasing: rows[(row * sw * 4)...]), rowCount: sh - row) }
        }
        #expect(streaming.isComplete)
        let expected = Resampler.resize(reducer.output, width: sw, height: sh, toWidth: tw, toHeight: th)
        #expect(streaming.output == expected)
    }

    /// The renderer takes that path only without a box step, and then counts
    /// the result and two rows instead of the decode as floats: a 4224×3168
    /// decode at 1500 px held 214 MB of floats and a 76 MB horizontal pass.
    @Test func theRendererStreamsOnlyWithoutABoxStepAndCountsWhatItHolds() throws {
        let large = try ThumbnailGeometry(sourceWidth: 4224, sourceHeight: 3168, width: 1500, height: nil, fit: .inside, enlarge: false)
        let renderer = ThumbnailRenderer(geometry: large, orientation: .up)
        #expect(renderer.streamsResampling(width: 4224, height: 3168))
        let peak = renderer.peakBytes(decodedWidth: 4224, decodedHeight: 3168)
        #expect(peak == 1500 * 1125 * (16 + 4) + (4224 + 1500) * 16)
        #expect(peak < 40 << 20)
        let small = try ThumbnailGeometry(sourceWidth: 4224, sourceHeight: 3168, width: 256, height: nil, fit: .inside, enlarge: false)
        #expect(!ThumbnailRenderer(geometry: small, orientation: .up).streamsResampling(width: 4224, height: 3168))
        // Already the target's size: nothing to resample.
        let same = try ThumbnailGeometry(sourceWidth: 300, sourceHeight: 200, width: 300, height: nil, fit: .inside, enlarge: false)
        #expect(!ThumbnailRenderer(geometry: same, orientation: .up).streamsResampling(width: 300, height: 200))
    }

    /// Through the renderer, whole bitmaps come out as before: the two-pass
    /// path's result (its reducer, then `Resampler`) byte for byte.
    @Test func theRendersAreUnchanged() throws {
        let source = noise(257, 190, seed: 7)
        let geometry = try ThumbnailGeometry(sourceWidth: 257, sourceHeight: 190, width: 200, height: nil, fit: .inside, enlarge: false)
        let streamed = ThumbnailRenderer.render(source, orientation: .up, geometry: geometry)
        var reducer = BoxReducer(sourceWidth: 257, sourceHeight: 190, kx: 1, ky: 1)
        source.pixels.withUnsafeBytes { reducer.consume($0, rowCount: 190) }
        let floats = Resampler.resize(reducer.output, width: 257, height: 190,
                                      toWidth: geometry.scaledWidth, toHeight: geometry.scaledHeight)
        let expected = ThumbnailRenderer.quantise(floats, width: geometry.scaledWidth, height: geometry.scaledHeight,
                                                  color: .sRGB)
        #expect(streamed.pixels == expected.pixels)
    }
}
