import Testing
@testable import ThumbImaging

@Suite struct ThumbnailRendererTests {
    private func geometry(_ sw: Int, _ sh: Int, _ w: Int?, _ h: Int?, fit: Fit = .inside,
                          enlarge: Bool = false) throws -> ThumbnailGeometry {
        try ThumbnailGeometry(sourceWidth: sw, sourceHeight: sh, width: w, height: h, fit: fit, enlarge: enlarge)
    }

    private func solid(_ w: Int, _ h: Int, _ rgba: [UInt8]) -> Bitmap {
        Bitmap(width: w, height: h, pixels: Array((0..<(w * h)).map { _ in rgba }.joined()))
    }

    /// A white disc on a transparent background, downscaled 8×: with alpha
    /// premultiplied before filtering, no edge pixel turns darker than the disc.
    @Test func noDarkFringeAroundTransparentEdges() throws {
        var disc = Bitmap(width: 512, height: 512)
        for y in 0..<512 {
            for x in 0..<512 {
                let dx = Double(x) + 0.5 - 256, dy = Double(y) + 0.5 - 256
                if dx * dx + dy * dy <= 200 * 200 {
                    let o = (y * 512 + x) * 4
                    disc.pixels[o] = 255; disc.pixels[o + 1] = 255; disc.pixels[o + 2] = 255; disc.pixels[o + 3] = 255
                }
            }
        }
        let out = ThumbnailRenderer.render(disc, orientation: .up, geometry: try geometry(512, 512, 64, 64))
        #expect(out.width == 64 && out.height == 64)
        var edgePixels = 0
        for y in 0..<64 {
            for x in 0..<64 {
                let p = out[x, y]
                guard p.a > 0 else { continue }
                if p.a < 255 { edgePixels += 1 }
                #expect(p.r >= 254 && p.g >= 254 && p.b >= 254, "(\(x),\(y)) = \(p)")
            }
        }
        #expect(edgePixels > 20, "the disc has antialiased edges")
        #expect(out[32, 32].a == 255 && out[0, 0].a == 0)
    }

    /// Averaging happens in linear light: a 1-px black/white checkerboard
    /// halves to sRGB ≈ 188 (linear 0.5), not 128.
    @Test func downscalingAveragesLinearLight() throws {
        var board = Bitmap(width: 64, height: 64)
        for y in 0..<64 {
            for x in 0..<64 {
                let v: UInt8 = (x + y) % 2 == 0 ? 255 : 0
                let o = (y * 64 + x) * 4
                board.pixels[o] = v; board.pixels[o + 1] = v; board.pixels[o + 2] = v; board.pixels[o + 3] = 255
            }
        }
        for target in [32, 9] {
            let out = ThumbnailRenderer.render(board, orientation: .up, geometry: try geometry(64, 64, target, target))
            for y in 1..<(target - 1) {
                for x in 1..<(target - 1) { #expect(abs(Int(out[x, y].r) - 188) <= 2, "\(target): \(out[x, y])") }
            }
        }
    }

    @Test(arguments: [(64, 48, 13, nil as Int?), (64, 48, 64, 48), (10, 10, 30, 30), (300, 7, 40, nil), (1, 1, 5, 5)])
    func constantImagesStayConstant(_ sw: Int, _ sh: Int, _ w: Int, _ h: Int?) throws {
        for colour: [UInt8] in [[200, 30, 90, 255], [10, 250, 128, 77], [0, 0, 0, 0]] {
            let out = ThumbnailRenderer.render(solid(sw, sh, colour), orientation: .up,
                                               geometry: try geometry(sw, sh, w, h, enlarge: true))
            for i in stride(from: 0, to: out.pixels.count, by: 4) {
                let tolerance = colour[3] == 0 ? 0 : 1
                for c in 0..<4 { #expect(abs(Int(out.pixels[i + c]) - Int(colour[c])) <= tolerance) }
                if abs(Int(out.pixels[i]) - Int(colour[0])) > tolerance { return }
            }
        }
    }

    @Test func streamingInAnyBatchSizeEqualsWholeBitmap() throws {
        var source = Bitmap(width: 203, height: 151)
        var rng = SystemRandomNumberGenerator()
        for i in source.pixels.indices { source.pixels[i] = UInt8.random(in: 0...255, using: &rng) }
        let g = try geometry(203, 151, 40, 40, fit: .cover)
        let whole = ThumbnailRenderer.render(source, orientation: .right, geometry: try geometry(151, 203, 40, 40, fit: .cover))
        for batch in [1, 7, 16] {
            var renderer = ThumbnailRenderer(geometry: try geometry(151, 203, 40, 40, fit: .cover), orientation: .right)
            renderer.begin(width: 203, height: 151)
            source.pixels.withUnsafeBytes { bytes in
                var row = 0
                while row < 151 {
                    let n = min(batch, 151 - row)
                    renderer.consume(UnsafeRawBufferPointer(rebasing: bytes[(row * 203 * 4)..<((row + n) * 203 * 4)]), rowCount: n)
                    row += n
                }
            }
            #expect(renderer.finish() == whole)
        }
        #expect(g.width == 40)
    }

    /// Fine stripes must not alias into bands: downscaled by 7× and by a
    /// non-integer 6.4×, they come out an even grey.
    @Test func highFrequenciesDoNotAlias() throws {
        var stripes = Bitmap(width: 448, height: 32)
        for y in 0..<32 {
            for x in 0..<448 {
                let v: UInt8 = x % 2 == 0 ? 255 : 0
                let o = (y * 448 + x) * 4
                stripes.pixels[o] = v; stripes.pixels[o + 1] = v; stripes.pixels[o + 2] = v; stripes.pixels[o + 3] = 255
            }
        }
        for w in [64, 70] {
            let out = ThumbnailRenderer.render(stripes, orientation: .up, geometry: try geometry(448, 32, w, nil))
            let row = (3..<(out.width - 3)).map { Int(out[$0, out.height / 2].r) }
            #expect(row.max()! - row.min()! <= 3, "\(w): \(row)")
        }
    }

    @Test func coverCropsTheCentre() throws {
        // Left third red, middle green, right third blue; cover into a square keeps the middle.
        var source = Bitmap(width: 300, height: 100)
        for y in 0..<100 {
            for x in 0..<300 {
                let o = (y * 300 + x) * 4
                source.pixels[o + x / 100] = 255
                source.pixels[o + 3] = 255
            }
        }
        let out = ThumbnailRenderer.render(source, orientation: .up, geometry: try geometry(300, 100, 50, 50, fit: .cover))
        #expect(out.width == 50 && out.height == 50)
        #expect(out[25, 25].g == 255 && out[25, 25].r == 0 && out[25, 25].b == 0)
    }

    @Test func orientationTransformsFollowTheEXIFDefinition() {
        // 3×2 stored image, pixel value = index, so every transform is checkable exactly.
        let stored = Bitmap(width: 3, height: 2, pixels: (0..<6).flatMap { [UInt8($0), 0, 0, 255] })
        func reds(_ b: Bitmap) -> [UInt8] { stride(from: 0, to: b.pixels.count, by: 4).map { b.pixels[$0] } }
        #expect(reds(stored.oriented(.up)) == [0, 1, 2, 3, 4, 5])
        #expect(reds(stored.oriented(.upMirrored)) == [2, 1, 0, 5, 4, 3])
        #expect(reds(stored.oriented(.down)) == [5, 4, 3, 2, 1, 0])
        #expect(reds(stored.oriented(.downMirrored)) == [3, 4, 5, 0, 1, 2])
        #expect(reds(stored.oriented(.leftMirrored)) == [0, 3, 1, 4, 2, 5])
        #expect(reds(stored.oriented(.right)) == [3, 0, 4, 1, 5, 2])
        #expect(reds(stored.oriented(.rightMirrored)) == [5, 2, 4, 1, 3, 0])
        #expect(reds(stored.oriented(.left)) == [2, 5, 1, 4, 0, 3])
        #expect(stored.oriented(.right).width == 2 && stored.oriented(.right).height == 3)
    }
}
