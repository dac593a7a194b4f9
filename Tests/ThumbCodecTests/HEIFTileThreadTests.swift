import Testing
@testable import ThumbCodec
import ThumbImaging

/// libheif decodes a HEIC grid's tiles on as many threads as the job was
/// given (at most THUMBD_HEIF_MAX_TILE_THREADS), and the picture is the same.
/// `large/grid-4x4.heif`: `hostile_isobmff.make_heic(4, 4)` (Tests/Benchmarks),
/// a 256×256 grid of 16 HEVC tile items sharing one 64×64 frame.
@Suite struct HEIFTileThreadTests {
    @Test func aGridAsksForUpToFourThreadsAndAnythingElseForOne() throws {
        let grid = try ImageDecoder.probe(Fixtures.bytes("large/grid-4x4.heif"), maxPixels: 1 << 24)
        #expect(grid.isobmff?.tiles == 16 && ImageDecoder.tileThreads(header: grid) == 4)
        let two = try ImageDecoder.probe(ISOBMFFWriter.heic(rows: 1, columns: 2).bytes(), maxPixels: 1 << 24)
        #expect(ImageDecoder.tileThreads(header: two) == 2, "no more threads than tiles")
        let single = try ImageDecoder.probe(Fixtures.bytes("large/flat-12mp.heif"), maxPixels: 1 << 24)
        #expect(single.isobmff?.tiles == 0 && ImageDecoder.tileThreads(header: single) == 1)
        let avif = try ImageDecoder.probe(Fixtures.bytes("formats/photo-grid.avif"), maxPixels: 1 << 24)
        #expect(ImageDecoder.tileThreads(header: avif) == 1, "libavif's grids decode on one thread")
        // Each thread beyond the first is counted in the estimate.
        let estimate = ImageDecoder.estimatedDecodeMemory(header: grid, minimumDisplayedSize: nil)
        #expect(estimate == grid.width * grid.height * 4 + 3 * ImageDecoder.planeBytes(grid)
                + 3 * ImageDecoder.heifTileThreadBytes)
    }

    @Test(arguments: [2, 4, 64])
    func theTilesDecodeToTheSamePictureOnAnyNumberOfThreads(threads: Int) throws {
        let bytes = Fixtures.bytes("large/grid-4x4.heif")
        let header = try ImageDecoder.probe(bytes, maxPixels: 1 << 24)
        var one = BitmapSink(), many = BitmapSink()
        try ImageDecoder.decode(bytes, header: header, minimumDisplayedSize: nil, tileThreads: 1, into: &one)
        try ImageDecoder.decode(bytes, header: header, minimumDisplayedSize: nil, tileThreads: threads, into: &many)
        let a = try #require(one.bitmap()), b = try #require(many.bitmap())
        #expect(a.width == 256 && a.height == 256 && a.pixels == b.pixels)
    }
}
