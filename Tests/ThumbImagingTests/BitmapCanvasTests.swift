import Testing
@testable import ThumbImaging

/// `contain`'s canvas and flattening onto `bg`: exact bytes (SPEC §3, `bg`).
@Suite struct BitmapCanvasTests {
    private func bitmap(_ width: Int, _ height: Int, _ pixels: [(UInt8, UInt8, UInt8, UInt8)]) -> Bitmap {
        Bitmap(width: width, height: height, pixels: pixels.flatMap { [$0.0, $0.1, $0.2, $0.3] })
    }

    private func pixel(_ b: Bitmap, _ x: Int, _ y: Int) -> [UInt8] {
        let p = b[x, y]
        return [p.r, p.g, p.b, p.a]
    }

    @Test func paddingIsTheBackgroundAndAnOpaqueImageIsCopied() {
        let red = bitmap(2, 1, [(255, 0, 0, 255), (254, 1, 2, 255)])
        let canvas = red.placed(onCanvasWidth: 4, height: 3, x: 1, y: 1,
                                background: RGBAColor(r: 0, g: 0, b: 255, a: 255))
        #expect(canvas.width == 4 && canvas.height == 3)
        for y in 0..<3 {
            for x in 0..<4 where !(y == 1 && (x == 1 || x == 2)) {
                #expect(pixel(canvas, x, y) == [0, 0, 255, 255], "padding at \(x),\(y)")
            }
        }
        #expect(pixel(canvas, 1, 1) == [255, 0, 0, 255])
        #expect(pixel(canvas, 2, 1) == [254, 1, 2, 255])
    }

    @Test func aTranslucentBackgroundPadsAsItIs() {
        let canvas = bitmap(1, 1, [(9, 9, 9, 255)])
            .placed(onCanvasWidth: 2, height: 1, x: 1, y: 0, background: RGBAColor(r: 10, g: 20, b: 30, a: 40))
        #expect(pixel(canvas, 0, 0) == [10, 20, 30, 40])
        #expect(pixel(canvas, 1, 0) == [9, 9, 9, 255])
    }

    @Test func aTranslucentImageIsCompositedOverTheBackground() {
        let image = bitmap(3, 1, [(200, 100, 0, 128), (255, 0, 0, 128), (1, 2, 3, 0)])
        let onBlue = image.placed(onCanvasWidth: 3, height: 1, x: 0, y: 0,
                                  background: RGBAColor(r: 0, g: 0, b: 255, a: 255))
        // (c·128 + bg·127 + 127) / 255 per channel; a transparent pixel shows the background.
        #expect(pixel(onBlue, 0, 0) == [100, 50, 127, 255])
        #expect(pixel(onBlue, 2, 0) == [0, 0, 255, 255])
        // Over a half-transparent blue: alpha 128 + 128·127/255 ≈ 192, red 255·128/(128 + 128·127/255) ≈ 170.
        let onHalfBlue = image.placed(onCanvasWidth: 3, height: 1, x: 0, y: 0,
                                      background: RGBAColor(r: 0, g: 0, b: 255, a: 128))
        #expect(pixel(onHalfBlue, 1, 0) == [170, 0, 85, 192])
        #expect(pixel(onHalfBlue, 2, 0) == [0, 0, 255, 128])
        // Over a fully transparent colour the image keeps its own pixels.
        let onClear = image.placed(onCanvasWidth: 3, height: 1, x: 0, y: 0,
                                   background: RGBAColor(r: 0, g: 0, b: 255, a: 0))
        #expect(pixel(onClear, 0, 0) == [200, 100, 0, 128])
        #expect(pixel(onClear, 2, 0) == [0, 0, 255, 0])
    }

    @Test func noBackgroundCopiesTheImageUnchangedOntoTransparentPadding() {
        let image = bitmap(2, 2, [(200, 100, 0, 128), (1, 2, 3, 0), (4, 5, 6, 7), (8, 9, 10, 255)])
        let canvas = image.placed(onCanvasWidth: 5, height: 4, x: 3, y: 2, background: nil)
        #expect(canvas.cropped(x: 3, y: 2, width: 2, height: 2) == image)
        for y in 0..<4 {
            for x in 0..<5 where !(x >= 3 && y >= 2) {
                #expect(pixel(canvas, x, y) == [0, 0, 0, 0])
            }
        }
    }

    @Test func overAnOpaqueBackgroundTheCanvasFlattensAsJPEGDoes() {
        // Every alpha, a few colours: the two rounding formulas agree byte for byte.
        let pixels: [UInt8] = (0..<256).flatMap { (a: Int) -> [UInt8] in [UInt8(a), UInt8(255 - a), 77, UInt8(a)] }
        let image = Bitmap(width: 256, height: 1, pixels: pixels)
        for bg in [RGBAColor.white, RGBAColor(r: 0, g: 0, b: 0), RGBAColor(r: 12, g: 200, b: 99)] {
            #expect(image.placed(onCanvasWidth: 256, height: 1, x: 0, y: 0, background: bg)
                    == image.flattened(onto: bg))
        }
    }

    @Test func flattenedWithoutABackgroundIsOverWhiteAsBefore() {
        let image = bitmap(2, 1, [(200, 100, 0, 128), (0, 128, 64, 77)])
        #expect(image.flattened().pixels == [227, 177, 127, 255, 178, 217, 197, 255])
        #expect(image.flattened() == image.flattened(onto: .white))
        let opaque = bitmap(1, 1, [(1, 2, 3, 255)])
        #expect(opaque.flattened(onto: RGBAColor(r: 9, g: 9, b: 9)) == opaque)
    }

    @Test func flattenedOntoAColour() {
        let image = bitmap(2, 1, [(200, 100, 0, 128), (1, 2, 3, 0)])
        #expect(image.flattened(onto: RGBAColor(r: 0, g: 0, b: 255)).pixels
                == [100, 50, 127, 255, 0, 0, 255, 255])
    }

    @Test func aTranslucentBackgroundIsFlattenedOverWhiteFirst() {
        let halfBlue = RGBAColor(r: 0, g: 0, b: 255, a: 128)
        #expect(halfBlue.overWhite == RGBAColor(r: 127, g: 127, b: 255))
        #expect(RGBAColor(r: 5, g: 6, b: 7).overWhite == RGBAColor(r: 5, g: 6, b: 7))
        #expect(RGBAColor.transparent.overWhite == .white)
        let image = bitmap(2, 1, [(200, 100, 0, 128), (1, 2, 3, 0)])
        #expect(image.flattened(onto: halfBlue).pixels == [164, 113, 127, 255, 127, 127, 255, 255])
    }

    @Test func flatteningOntoBgLooksLikeTheTranslucentCanvasOnAWhitePage() {
        // Source-over is associative, so image over (bg over white) and (image over bg) over
        // white differ only by rounding, twice on each route (the canvas also quantises its
        // alpha): at most 2 per channel, over every alpha pair (1 in 50 000 channels reach 2).
        for bgAlpha in stride(from: 0, through: 255, by: 5) {
            let bg = RGBAColor(r: 30, g: 160, b: 250, a: UInt8(bgAlpha))
            let pixels: [UInt8] = (0..<256).flatMap { (a: Int) -> [UInt8] in [UInt8(a), 40, UInt8(255 - a), UInt8(a)] }
            let image = Bitmap(width: 256, height: 1, pixels: pixels)
            let direct = image.flattened(onto: bg)
            let viaCanvas = image.placed(onCanvasWidth: 256, height: 1, x: 0, y: 0, background: bg).flattened()
            let worst = zip(direct.pixels, viaCanvas.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(worst <= 2, "bg alpha \(bgAlpha)")
        }
    }
}
