import Foundation
import Testing
@testable import ThumbCodec

/// Issue 19: AVIF and HEIC files whose structure costs libavif 0.11 or libheif
/// 1.15 far more than their size (minutes of CPU, gigabytes), built as
/// Tests/Benchmarks/hostile_isobmff.py builds them. On the main branch before
/// the ISOBMFF walk each of these was parsed (and most decoded) by a library;
/// now the probe throws before calling one — `tooComplex` and `corrupt` come
/// only from the structure walk, never from the C shim.
@Suite struct HostileISOBMFFTests {
    typealias W = ISOBMFFWriter

    private func expectRefused(_ bytes: [UInt8], tooComplex: Bool, _ why: Comment,
                               sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try ImageDecoder.probe(bytes, maxPixels: 50_000_000)
            Issue.record("probe passed: \(why)", sourceLocation: sourceLocation)
        } catch {
            switch error {
            case .tooComplex where tooComplex, .corrupt where !tooComplex: return
            default: Issue.record("\(error): \(why)", sourceLocation: sourceLocation)
            }
        }
    }

    /// Item 1: one AV1 image and an ipma box of 200 000 entries for items that
    /// do not exist (1 MB). libavif looked each up linearly and created it:
    /// 85 s of CPU and 320 MB.
    @Test func anIpmaOfTwoHundredThousandItemsIsRefused() {
        var file = W.avif()
        file.associations += (2..<200_002).map { (id: UInt32($0), indices: [Int]()) }
        let bytes = file.bytes()
        #expect(bytes.count > 1_000_000)
        expectRefused(bytes, tooComplex: true, "200 000 ipma entries")
        // Within the item limit, entries for items that do not exist are still refused.
        file.associations = [(1, [1, 0x82]), (2, [])]
        expectRefused(file.bytes(), tooComplex: false, "an ipma entry for no item")
    }

    /// Item 2: a 64×64 grid of 64-px tile items whose extents all point at one
    /// 27-byte AV1 frame (172 KB). libavif kept a dav1d decoder and picture
    /// per tile: 1.75 GB for a 16 MP image estimated at 140 MB.
    @Test func aGridOfThousandsOfTilesOnOneFrameIsRefused() {
        expectRefused(W.avif(rows: 64, columns: 64).bytes(), tooComplex: true, "4096 tile items")
        // Under the item limit, over the tile limit: 1600 tiles.
        expectRefused(W.avif(rows: 40, columns: 40).bytes(), tooComplex: true, "a 40×40 grid")
        expectRefused(W.avif(rows: 40, columns: 40, shared: false).bytes(), tooComplex: true, "a 40×40 grid, distinct frames")
    }

    /// A grid at the tile limit passes, and its estimate counts a dav1d
    /// decoder and picture per tile (measured 0.40 MB each), so admission
    /// sees the 0.5 GB libavif will hold, not the 50 MB of its planes.
    @Test func gridTilesAreCountedInTheMemoryEstimate() throws {
        let grid = try ImageDecoder.probe(W.avif(rows: 32, columns: 32).bytes(), maxPixels: 50_000_000)
        #expect(grid.width == 2048 && grid.height == 2048 && grid.isobmff?.tiles == 1024)
        let planes = ImageDecoder.planeBytes(grid) * 3 / 2 + 2048 * 2048 * 4
        #expect(ImageDecoder.estimatedDecodeMemory(header: grid, minimumDisplayedSize: nil)
            == planes + 1024 * ImageDecoder.avifTileBytes)
        #expect(ImageDecoder.avifTileBytes >= 440_000)
        // A real two-tile grid: two decoders more than its planes.
        let small = try ImageDecoder.probe(Fixtures.bytes("formats/photo-grid.avif"), maxPixels: 1 << 22)
        #expect(ImageDecoder.avifWorkingBytes(small) == ImageDecoder.planeBytes(small) * 3 / 2 + 2 * ImageDecoder.avifTileBytes)
        // An alpha grid's tiles count too, whether its auxC is on the grid or on its tiles.
        var alpha = W.avif(rows: 2, columns: 2)
        alpha.properties.append(W.full("auxC", Array("urn:mpeg:mpegB:cicp:systems:auxiliary:alpha".utf8) + [0]))
        alpha.items += [(6, "grid")] + (7...10).map { (id: UInt32($0), type: "av01") }
        alpha.associations += [(6, [3])] + (7...10).map { (id: UInt32($0), indices: [1, 0x82, 4]) }
        alpha.references += [("dimg", 6, [7, 8, 9, 10]), ("auxl", 6, [1])]
        alpha.data.append((6, W.gridPayload(rows: 2, columns: 2, width: 128, height: 128)))
        for tile in 7...10 { alpha.shares[UInt32(tile)] = 2 }
        #expect(try StructureWalk.walk(alpha.bytes(), format: .avif)?.tiles == 8)
        // HEIC: libheif decodes tiles one at a time; nothing per tile.
        let heic = try ImageDecoder.probe(W.heic(rows: 4, columns: 4).bytes(), maxPixels: 50_000_000)
        #expect(heic.isobmff?.usesLibheif == true && heic.isobmff?.tiles == 16)
        #expect(ImageDecoder.estimatedDecodeMemory(header: heic, minimumDisplayedSize: nil)
            == 256 * 256 * 4 + ImageDecoder.heifWorkingBytes(heic))
    }

    /// Item 2, the tile rule: tiles under 64 px in a grid of several (libavif
    /// refused them only after decoding every tile), and a zero-length tile
    /// (libavif handed dav1d an empty sample).
    @Test func smallOrEmptyTilesAreRefusedFromTheHeaders() throws {
        expectRefused(W.avif(rows: 2, columns: 2, tile: 32).bytes(), tooComplex: false, "32-px tiles")
        var empty = W.avif(rows: 2, columns: 2, shared: false)
        empty.data[2].bytes = []
        expectRefused(empty.bytes(), tooComplex: false, "a tile of no bytes")
        // A one-tile grid may be smaller: heif-enc wraps an odd-sized picture so.
        var one = W.heic(rows: 1, columns: 1)
        one.data[0].bytes = W.gridPayload(rows: 1, columns: 1, width: 20, height: 15)
        one.properties[2] = W.ispe(20, 15)
        #expect(try ImageDecoder.probe(one.bytes(), maxPixels: 1000).width == 20)
    }

    /// The codec fuzzer's reproducer for the dav1d leak (.ci/lsan.supp listed
    /// it): an AV1 image whose iloc entry has no extents. libavif refused
    /// it, and it went on to libheif because the bytes "hvcC" appear past its
    /// mdat; libheif 1.15's dav1d plugin handed dav1d the empty sample and
    /// lost the buffer when dav1d refused it. Now the walk refuses the empty
    /// item, and the box of size 2 after the mdat, before any library; and an
    /// AV1 image never reaches libheif whatever bytes lie around it.
    @Test func theDav1dLeakReproducerNeverReachesALibrary() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fuzz/corpus/codec/avif-grid-zero-length-tile").standardized.path
        let seed = try #require(FileManager.default.contents(atPath: path).map { [UInt8]($0) })
        expectRefused(seed, tooComplex: false, "the fuzzer's seed")
        let whole = Array(seed[..<0x449])   // ftyp, meta, mdat: without the tail
        #expect(throws: CodecError.corrupt("ISOBMFF: 'av01' item 1 has no data")) {
            try StructureWalk.walk(whole, format: .avif)
        }
    }

    /// Item 3: a 255×256 grid whose 65 280 dimg references all name one
    /// 14-byte HEVC item (131 KB): 65 280 tile decodes in one libheif call.
    @Test func aHEICGridNamingOneItemForEveryTileIsRefused() {
        let bytes = W.heic(rows: 255, columns: 256, tile: 16, oneItem: true).bytes()
        #expect(bytes.count < 140_000)
        expectRefused(bytes, tooComplex: true, "65 280 references to one item")
        // Fewer references, under every count: a tile named twice is still refused.
        expectRefused(W.heic(rows: 8, columns: 8, oneItem: true).bytes(), tooComplex: false, "one item, 64 tiles")
    }

    /// Item 4: a 141×141 grid of 19 881 distinct tile items: libheif's parse
    /// took 12 s (twice: probe and decode), then ~20 000 tile decodes.
    @Test func aHEICGridOfTwentyThousandDistinctTilesIsRefused() {
        expectRefused(W.heic(rows: 141, columns: 141, tile: 32).bytes(), tooComplex: true, "19 881 tile items")
        expectRefused(W.heic(rows: 33, columns: 33).bytes(), tooComplex: true, "1089 tiles")
        #expect((try? ImageDecoder.probe(W.heic(rows: 32, columns: 32).bytes(), maxPixels: 50_000_000))?.width == 2048)
    }

    /// Grids that do not fit their tiles, tiles that are not images, loops.
    @Test func gridsMustFitTheirTiles() {
        var file = W.heic(rows: 2, columns: 2)
        file.data[0].bytes = W.gridPayload(rows: 2, columns: 2, width: 129, height: 128)
        expectRefused(file.bytes(), tooComplex: false, "tiles that do not cover the output")
        file.data[0].bytes = W.gridPayload(rows: 2, columns: 2, width: 64, height: 128)
        file.properties[2] = W.ispe(64, 128)
        expectRefused(file.bytes(), tooComplex: false, "a last column outside the output")
        file = W.heic(rows: 2, columns: 2)
        file.properties[2] = W.ispe(100, 100)
        expectRefused(file.bytes(), tooComplex: false, "the grid's ispe is not its output size")
        file = W.heic(rows: 2, columns: 2)
        file.references = [("dimg", 1, [2, 3, 4])]
        expectRefused(file.bytes(), tooComplex: false, "three tiles for 2×2")
        file = W.heic(rows: 1, columns: 2)
        file.properties.append(W.ispe(128, 64))
        file.associations[2].indices = [0x81, 4]
        expectRefused(file.bytes(), tooComplex: false, "tiles of different sizes")
        file.associations[2].indices = [0x81]
        expectRefused(file.bytes(), tooComplex: false, "a tile without ispe")
        file = W.heic(rows: 1, columns: 2)
        file.items[2].type = "Exif"
        expectRefused(file.bytes(), tooComplex: false, "an Exif item as a tile")
        // Two grids naming each other: libheif's dimg recursion would not end.
        file = W.heic(rows: 1, columns: 2)
        file.items[2].type = "grid"
        file.references.append(("dimg", 3, [1]))
        expectRefused(file.bytes(), tooComplex: false, "a loop of grids")
    }

    /// libheif sees only files whose images are all HEVC (the walk decides,
    /// not a search for "hvcC" anywhere in the file), so its dav1d path never runs.
    @Test func onlyAllHEVCFilesReachLibheif() throws {
        let heic = try ImageDecoder.probe(Fixtures.bytes("formats/crowd_1440x960.heic"), maxPixels: 1 << 22)
        #expect(heic.isobmff?.usesLibheif == true)
        // An AV1 image with an unused hvcC property: libavif's, and it decodes.
        var stray = W.avif()
        stray.properties.append(W.box("hvcC", W.hvcC))
        let (bitmap, header) = try ImageDecoder.decodeBitmap(stray.bytes(), maxPixels: 1 << 20)
        #expect(header.isobmff?.coding == .av1 && bitmap.width == 64)
        // An HEVC image with an AV1 alpha plane: a mixture, not libheif's.
        var mixed = W.heic(rows: 1, columns: 1)
        mixed.items.append((3, "av01"))
        mixed.properties += [W.box("av1C", W.av1C), W.full("auxC", Array("urn:mpeg:mpegB:cicp:systems:auxiliary:alpha".utf8) + [0])]
        mixed.associations.append((3, [2, 4, 5]))
        mixed.references.append(("auxl", 3, [1]))
        mixed.data.append((3, W.av1Frame))
        #expect(try StructureWalk.walk(mixed.bytes(), format: .heic)?.coding == .other)
    }
}
