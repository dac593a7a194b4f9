import Testing
@testable import ThumbImaging

/// `contain`, `gravity`, `fp` and `attention` laid out (SPEC §3.1, §3.4).
@Suite struct CompositionGeometryTests {
    private func layout(_ sw: Int, _ sh: Int, _ w: Int?, _ h: Int?, _ fit: Fit, enlarge: Bool = false,
                        gravity: Gravity? = nil, fp: FocalPoint? = nil) throws -> ThumbnailGeometry {
        try ThumbnailGeometry(sourceWidth: sw, sourceHeight: sh, width: w, height: h, fit: fit,
                              enlarge: enlarge, gravity: gravity, focalPoint: fp)
    }

    // MARK: contain

    @Test func containScalesAsInsideAndCentresOnTheWholeBox() throws {
        // Landscape: 400×200 → 100×50, 50 rows of padding split 25/25.
        #expect(try layout(400, 200, 100, 100, .contain)
                == ThumbnailGeometry(scaledWidth: 100, scaledHeight: 50, width: 100, height: 100,
                                     windowWidth: 100, windowHeight: 50, imageX: 0, imageY: 25))
        // Portrait: 200×400 → 50×100 at x 25.
        #expect(try layout(200, 400, 100, 100, .contain)
                == ThumbnailGeometry(scaledWidth: 50, scaledHeight: 100, width: 100, height: 100,
                                     windowWidth: 50, windowHeight: 100, imageX: 25, imageY: 0))
        // Odd padding: 300×200 → 100×67 (66.67 rounded), 33 rows: floor(33/2) = 16 above, 17 below.
        let odd = try layout(300, 200, 100, 100, .contain)
        #expect(odd.windowWidth == 100 && odd.windowHeight == 67 && odd.imageX == 0 && odd.imageY == 16)
        #expect(odd.width == 100 && odd.height == 100 && odd.cropX == 0 && odd.cropY == 0)
    }

    @Test func containWithoutEnlargeKeepsTheImageSmallButTheCanvasWhole() throws {
        let g = try layout(51, 31, 100, 100, .contain)
        #expect(g == ThumbnailGeometry(scaledWidth: 51, scaledHeight: 31, width: 100, height: 100,
                                       windowWidth: 51, windowHeight: 31, imageX: 24, imageY: 34))
        let even = try layout(50, 30, 100, 100, .contain)
        #expect(even.imageX == 25 && even.imageY == 35 && even.width == 100 && even.height == 100)
        // With enlarge the image grows to the box's limiting side: scale 2 → 100×60 at y 20.
        let big = try layout(50, 30, 100, 100, .contain, enlarge: true)
        #expect(big == ThumbnailGeometry(scaledWidth: 100, scaledHeight: 60, width: 100, height: 100,
                                         windowWidth: 100, windowHeight: 60, imageX: 0, imageY: 20))
    }

    @Test(arguments: [
        // gravity, (x, y) of a 51×31 image on 100×100 (slack 49, 69), then of a 50×30 one (slack 50, 70).
        (Gravity.center, 24, 34, 25, 35),
        (.north, 24, 0, 25, 0), (.south, 24, 69, 25, 70),
        (.west, 0, 34, 0, 35), (.east, 49, 34, 50, 35),
        (.northwest, 0, 0, 0, 0), (.northeast, 49, 0, 50, 0),
        (.southwest, 0, 69, 0, 70), (.southeast, 49, 69, 50, 70),
        (.attention, 24, 34, 25, 35),
    ])
    func containGravityPlacesTheImage(_ gravity: Gravity, oddX: Int, oddY: Int, evenX: Int, evenY: Int) throws {
        let odd = try layout(51, 31, 100, 100, .contain, gravity: gravity)
        #expect(odd.imageX == oddX && odd.imageY == oddY)
        #expect(odd.windowWidth == 51 && odd.windowHeight == 31 && odd.width == 100 && odd.height == 100)
        #expect(!odd.needsFocus, "contain places attention as center, no focus needed")
        let even = try layout(50, 30, 100, 100, .contain, gravity: gravity)
        #expect(even.imageX == evenX && even.imageY == evenY)
    }

    @Test func containIgnoresAFocalPoint() throws {
        #expect(try layout(300, 200, 100, 100, .contain, fp: FocalPoint(x: 1000, y: 0))
                == layout(300, 200, 100, 100, .contain))
    }

    // MARK: cover

    @Test(arguments: [
        // gravity, cropX of 400×300 → 133×100 (slack 33), cropY of 300×400 → 100×133 (slack 33).
        (Gravity.center, 16, 16),
        (.north, 16, 0), (.south, 16, 33), (.west, 0, 16), (.east, 33, 16),
        (.northwest, 0, 0), (.northeast, 33, 0), (.southwest, 0, 33), (.southeast, 33, 33),
    ])
    func coverGravityAlignsTheWindow(_ gravity: Gravity, x: Int, y: Int) throws {
        let landscape = try layout(400, 300, 100, 100, .cover, gravity: gravity)
        #expect(landscape == ThumbnailGeometry(scaledWidth: 133, scaledHeight: 100, cropX: x, cropY: 0,
                                               width: 100, height: 100))
        let portrait = try layout(300, 400, 100, 100, .cover, gravity: gravity)
        #expect(portrait == ThumbnailGeometry(scaledWidth: 100, scaledHeight: 133, cropX: 0, cropY: y,
                                              width: 100, height: 100))
    }

    @Test(arguments: [
        // fp (thousandths), cropX of 133×100 under a 100-wide window, cropY of 100×133.
        (0, 0, 0), (1000, 33, 33),
        (500, 17, 17),    // round(66.5 − 50) = round(16.5) = 17, not the centre's floor 16
        (600, 30, 30),    // round(79.8 − 50) = 30
        (200, 0, 0),      // 26.6 − 50 < 0: clamped to the left edge
        (700, 33, 33),    // 93.1 − 50 = 43.1: clamped to 133 − 100
    ])
    func focalPointPlacesTheCoverWindow(_ t: Int, x: Int, y: Int) throws {
        let landscape = try layout(400, 300, 100, 100, .cover, fp: FocalPoint(x: t, y: 500))
        #expect(landscape.cropX == x && landscape.cropY == 0 && landscape.width == 100)
        let portrait = try layout(300, 400, 100, 100, .cover, fp: FocalPoint(x: 500, y: t))
        #expect(portrait.cropX == 0 && portrait.cropY == y && portrait.height == 100)
        #expect(!landscape.needsFocus && !portrait.needsFocus)
    }

    @Test func focalPointRoundsHalfAwayFromZeroExactly() throws {
        // 4000×3000 into 256×256: scaled 341×256; round(0.5·341 − 128) = round(42.5) = 43.
        let g = try layout(4000, 3000, 256, 256, .cover, fp: FocalPoint(x: 500, y: 500))
        #expect(g.scaledWidth == 341 && g.cropX == 43 && g.cropY == 0)
        // 200×101 into 101×101 (no enlarge): 0.285·200 − 50.5 is exactly 6.5 → 7, though
        // 0.285 as a Double times 200 is 56.99999999999999 and would round to 6.
        let h = try layout(200, 101, 101, 101, .cover, fp: FocalPoint(x: 285, y: 0))
        #expect(h.scaledWidth == 200 && h.windowWidth == 101 && h.cropX == 7)
    }

    @Test func focalPointWinsOverGravityAndIsIgnoredOutsideCover() throws {
        let fp = FocalPoint(x: 0, y: 0)
        #expect(try layout(400, 300, 100, 100, .cover, gravity: .east, fp: fp).cropX == 0)
        #expect(try !layout(400, 300, 100, 100, .cover, gravity: .attention, fp: fp).needsFocus)
        for fit in [Fit.inside, .fill] {
            #expect(try layout(400, 300, 100, 100, fit, gravity: .southeast, fp: fp)
                    == layout(400, 300, 100, 100, fit), "\(fit) ignores gravity and fp")
        }
    }

    @Test func coverOnASmallSourceHasNowhereToMove() throws {
        // 50×80 into 100×100 without enlarge: the window is the whole scaled image.
        for gravity in Gravity.allCases where gravity != .attention {
            #expect(try layout(50, 80, 100, 100, .cover, gravity: gravity)
                    == ThumbnailGeometry(scaledWidth: 50, scaledHeight: 80, width: 50, height: 80))
        }
        #expect(try layout(50, 80, 100, 100, .cover, fp: FocalPoint(x: 1000, y: 1000)).cropX == 0)
    }

    // MARK: attention

    @Test func attentionIsCentredUntilPlacedOnItsFocus() throws {
        let g = try layout(400, 300, 100, 100, .cover, gravity: .attention)
        #expect(g.needsFocus)
        #expect(g.cropX == 16 && g.cropY == 0, "laid out as center meanwhile")
        let placed = g.placed(onFocus: FocalPoint(x: 500, y: 500))
        #expect(!placed.needsFocus)
        #expect(placed == (try layout(400, 300, 100, 100, .cover, fp: FocalPoint(x: 500, y: 500))))
        #expect(placed.cropX == 17)
        #expect(g.placed(onFocus: FocalPoint(x: 1000, y: 1000)).cropX == 33)
        #expect(g.placed(onFocus: FocalPoint(x: 0, y: 1000)).cropX == 0)
        // Portrait: the focus moves the window down.
        let p = try layout(300, 400, 100, 100, .cover, gravity: .attention)
        #expect(p.needsFocus && p.cropY == 16)
        #expect(p.placed(onFocus: FocalPoint(x: 500, y: 600)).cropY == 30)
    }

    @Test func placingAWholeWindowOnAFocusChangesNothing() throws {
        let contain = try layout(51, 31, 100, 100, .contain, gravity: .southeast)
        #expect(contain.placed(onFocus: FocalPoint(x: 1000, y: 1000)) == contain)
        let inside = try layout(400, 300, 100, nil, .inside)
        #expect(inside.placed(onFocus: FocalPoint(x: 0, y: 1000)) == inside)
    }

    @Test func placementArithmeticAtTheEdges() {
        #expect(Placement.focused(thousandths: 0, room: 10, length: 10) == 0)
        #expect(Placement.focused(thousandths: 1000, room: 10, length: 10) == 0)
        #expect(Placement.focused(thousandths: 1000, room: 10, length: 1) == 9)
        // Negative halves round away from zero too before clamping: −0.5 → −1 → 0.
        #expect(Placement.focused(thousandths: 0, room: 10, length: 1) == 0)
        #expect(Placement.focused(thousandths: 250, room: 10, length: 4) == 1) // 2.5 − 2 = 0.5 → 1
        #expect(Placement.middle.offset(slack: 7) == 3 && Placement.end.offset(slack: 7) == 7)
    }
}
