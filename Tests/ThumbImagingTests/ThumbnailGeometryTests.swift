import Testing
@testable import ThumbImaging

@Suite struct ThumbnailGeometryTests {
    @Test func insideKeepsAspectAndNeverEnlargesByDefault() throws {
        let g = try ThumbnailGeometry(sourceWidth: 4224, sourceHeight: 3168, width: 256, height: 256,
                                      fit: .inside, enlarge: false)
        #expect(g == ThumbnailGeometry(scaledWidth: 256, scaledHeight: 192, width: 256, height: 192))
        let small = try ThumbnailGeometry(sourceWidth: 100, sourceHeight: 50, width: 400, height: nil,
                                          fit: .inside, enlarge: false)
        #expect(small.width == 100 && small.height == 50)
        let big = try ThumbnailGeometry(sourceWidth: 100, sourceHeight: 50, width: 400, height: nil,
                                        fit: .inside, enlarge: true)
        #expect(big.width == 400 && big.height == 200)
    }

    @Test func insideWithOneSideAndRoundingHalfAwayFromZero() throws {
        // 2×4 into h=5: scale 1.25, width 2.5 → 3 (half away from zero).
        let g = try ThumbnailGeometry(sourceWidth: 2, sourceHeight: 4, width: nil, height: 5,
                                      fit: .inside, enlarge: true)
        #expect(g.width == 3 && g.height == 5)
        let thin = try ThumbnailGeometry(sourceWidth: 1000, sourceHeight: 1, width: 10, height: nil,
                                         fit: .inside, enlarge: false)
        #expect(thin.width == 10 && thin.height == 1, "a side never rounds to 0")
    }

    @Test func coverCropsAroundTheCentre() throws {
        let g = try ThumbnailGeometry(sourceWidth: 400, sourceHeight: 200, width: 100, height: 100,
                                      fit: .cover, enlarge: false)
        #expect(g == ThumbnailGeometry(scaledWidth: 200, scaledHeight: 100, cropX: 50, cropY: 0,
                                       width: 100, height: 100))
        // Odd leftover: floor((101 - 100) / 2) = 0.
        let odd = try ThumbnailGeometry(sourceWidth: 303, sourceHeight: 300, width: 100, height: 100,
                                        fit: .cover, enlarge: false)
        #expect(odd.scaledWidth == 101 && odd.cropX == 0 && odd.width == 100)
    }

    @Test func coverWithoutEnlargeIsCappedBySource() throws {
        let g = try ThumbnailGeometry(sourceWidth: 50, sourceHeight: 80, width: 100, height: 100,
                                      fit: .cover, enlarge: false)
        #expect(g == ThumbnailGeometry(scaledWidth: 50, scaledHeight: 80, width: 50, height: 80))
    }

    @Test func fillIgnoresAspect() throws {
        let g = try ThumbnailGeometry(sourceWidth: 400, sourceHeight: 200, width: 50, height: 150,
                                      fit: .fill, enlarge: false)
        #expect(g.width == 50 && g.height == 150)
        let capped = try ThumbnailGeometry(sourceWidth: 40, sourceHeight: 200, width: 50, height: 150,
                                           fit: .fill, enlarge: false)
        #expect(capped.width == 40 && capped.height == 150)
    }

    @Test func missingSidesAreErrors() {
        #expect(throws: GeometryError.noSide) {
            try ThumbnailGeometry(sourceWidth: 4, sourceHeight: 4, width: nil, height: nil, fit: .inside, enlarge: false)
        }
        #expect(throws: GeometryError.needsBothSides(.cover)) {
            try ThumbnailGeometry(sourceWidth: 4, sourceHeight: 4, width: 2, height: nil, fit: .cover, enlarge: false)
        }
        #expect(throws: GeometryError.needsBothSides(.fill)) {
            try ThumbnailGeometry(sourceWidth: 4, sourceHeight: 4, width: nil, height: 2, fit: .fill, enlarge: false)
        }
        #expect(throws: GeometryError.needsBothSides(.contain)) {
            try ThumbnailGeometry(sourceWidth: 4, sourceHeight: 4, width: 2, height: nil, fit: .contain, enlarge: false)
        }
    }
}
