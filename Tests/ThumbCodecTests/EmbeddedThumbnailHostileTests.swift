import Testing
import ThumbImaging
import ThumbTestSupport
@testable import ThumbCodec

/// Thumbnail items that lie (API.md § Formats read, "Embedded thumbnails"):
/// each variant of `thumbnail/rocket-t160.*` below is one byte-level edit of
/// it. A thumbnail the rules do not accept is ignored; one that is accepted
/// but does not decode as it claims gives way to the primary image, whose
/// render is then exactly the render without thumbnails; a `thmb` naming an
/// item that does not exist is a corrupt file, as before thumbnails were read.
@Suite struct EmbeddedThumbnailHostileTests {
    private static let files = ["rocket-t160.heic", "rocket-t160.avif"]

    /// `bytes` with the one occurrence of `pattern` replaced.
    private func replacing(_ pattern: [UInt8], with replacement: [UInt8], in bytes: [UInt8]) throws -> [UInt8] {
        precondition(pattern.count == replacement.count)
        let starts = (0...(bytes.count - pattern.count)).filter { bytes[$0..<$0 + pattern.count].elementsEqual(pattern) }
        try #require(starts.count == 1, "\(starts.count) occurrences")
        var edited = bytes
        edited.replaceSubrange(starts[0]..<starts[0] + pattern.count, with: replacement)
        return edited
    }

    private func ispe(_ width: UInt32, _ height: UInt32) -> [UInt8] {
        Array("ispe".utf8) + [0, 0, 0, 0] + ISOBMFFWriter.be32(width) + ISOBMFFWriter.be32(height)
    }

    /// A 128-px render: the thumbnail item it decoded, and its pixels.
    private func render(_ bytes: [UInt8], thumbnail: Bool = true) throws -> (Bitmap, UInt32?) {
        let header = try ImageDecoder.probe(bytes, maxPixels: 1 << 24)
        let geometry = try ThumbnailGeometry(sourceWidth: header.width, sourceHeight: header.height, width: 128,
                                             height: 128, fit: .inside, enlarge: false)
        var renderer = ThumbnailRenderer(geometry: geometry, orientation: header.orientation)
        let info = try ImageDecoder.decode(bytes, header: header, minimumDisplayedSize: (128, 85),
                                           useEmbeddedThumbnail: thumbnail, into: &renderer)
        return (renderer.finish(), info.thumbnailItem)
    }

    /// The render of `edited` is the primary's render of the untouched file, exactly.
    private func expectPrimary(_ edited: [UInt8], _ original: [UInt8], _ why: Comment,
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (bitmap, item) = try render(edited)
        let primary = try render(original, thumbnail: false).0
        let same = bitmap.pixels == primary.pixels
        #expect(item == nil && same, why, sourceLocation: sourceLocation)
    }

    /// Sizes that no thumbnail of a 640×427 image has: larger than it, absurdly
    /// long or flat (libheif's own side limit is 32 768), square, a 16:9 crop,
    /// more than a quarter of its pixels. The walk lists them; none is chosen.
    @Test(arguments: files)
    func aThumbnailOfAnotherSizeIsIgnored(name: String) throws {
        let original = Fixtures.bytes("thumbnail/\(name)")
        for (width, height) in [(1280, 854), (30000, 1), (1, 20000), (160, 160), (160, 90), (330, 220)] {
            let edited = try replacing(ispe(160, 106), with: ispe(UInt32(width), UInt32(height)), in: original)
            let header = try ImageDecoder.probe(edited, maxPixels: 1 << 24)
            #expect(header.isobmff?.thumbnails.first?.width == width)
            #expect(!ImageDecoder.usesEmbeddedThumbnail(header: header, minimumDisplayedSize: (1, 1)), "\(width)×\(height)")
            try expectPrimary(edited, original, "\(width)×\(height)")
        }
    }

    /// A thumbnail whose ispe says 150×100 — acceptable — but whose
    /// bitstream is 160×106. HEIC: libheif decodes 160×106, the decoder's
    /// size check refuses it, and the primary is decoded. AVIF: libavif
    /// scales every decoded frame to its ispe (as it would a primary's), so
    /// the whole picture comes out at the size the walk expected.
    @Test(arguments: files)
    func aThumbnailWhoseBitstreamIsNotItsIspe(name: String) throws {
        let original = Fixtures.bytes("thumbnail/\(name)")
        let edited = try replacing(ispe(160, 106), with: ispe(150, 100), in: original)
        let header = try ImageDecoder.probe(edited, maxPixels: 1 << 24)
        #expect(ImageDecoder.usesEmbeddedThumbnail(header: header, minimumDisplayedSize: (128, 85)))
        guard name.hasSuffix(".avif") else {
            try expectPrimary(edited, original, "a 160×106 bitstream under a 150×100 ispe")
            return
        }
        var sink = BitmapSink()
        let info = try ImageDecoder.decode(edited, header: header, minimumDisplayedSize: (128, 85),
                                           useEmbeddedThumbnail: true, into: &sink)
        #expect(info.thumbnailItem != nil && info.width == 150 && info.height == 100)
        let psnr = PSNR.premultiplied(try render(edited).0, try render(original, thumbnail: false).0)
        #expect(psnr > 25, "\(psnr) dB")
    }

    /// A thumbnail whose coded bytes are all zero fails to decode; the
    /// primary is decoded instead of the image being refused.
    @Test(arguments: files)
    func aThumbnailThatFailsToDecodeGivesWayToThePrimary(name: String) throws {
        let original = Fixtures.bytes("thumbnail/\(name)")
        let header = try ImageDecoder.probe(original, maxPixels: 1 << 24)
        let item = try #require(header.isobmff?.thumbnails.first?.item)
        let extents = try #require(locations(original)[item]?.extents)
        var edited = original
        for extent in extents {
            let start = Int(extent.offset)
            edited.replaceSubrange(start..<start + Int(extent.length), with: repeatElement(0, count: Int(extent.length)))
        }
        #expect(try render(original).1 == item)
        try expectPrimary(edited, original, "a thumbnail of zeros")
    }

    /// A `thmb` from or to an item that does not exist: the structure walk
    /// refuses the file (`corrupt`), with or without thumbnails in play.
    @Test(arguments: files)
    func aThumbnailReferenceToNoItemIsCorrupt(name: String) throws {
        let original = Fixtures.bytes("thumbnail/\(name)")
        let header = try ImageDecoder.probe(original, maxPixels: 1 << 24)
        let thumbnail = try #require(header.isobmff?.thumbnails.first?.item)
        let primary: UInt16 = name.hasSuffix(".heic") ? 2 : 1
        let reference = Array("thmb".utf8) + ISOBMFFWriter.be16(UInt16(thumbnail)) + [0, 1] + ISOBMFFWriter.be16(primary)
        for edited in [try replacing(reference, with: Array(reference.prefix(8)) + [0, 99], in: original),
                       try replacing(reference, with: Array("thmb".utf8) + [0, 99] + Array(reference.suffix(4)), in: original)] {
            do {
                _ = try ImageDecoder.probe(edited, maxPixels: 1 << 24)
                Issue.record("a thmb naming item 99 was accepted")
            } catch {
                guard case .corrupt = error else { Issue.record("\(error)"); continue }
            }
        }
    }

    /// The walk's rules on built files (nothing is decoded, so the declared
    /// sizes are all that count): a 640×480 AV1 primary and its 160×120
    /// thumbnail are listed; each variant breaks one rule and lists none, or
    /// changes what is listed.
    @Test func theWalkListsOnlyThumbnailsItsDecoderReadsAsThePrimary() throws {
        typealias W = ISOBMFFWriter
        func file(_ edit: (inout W) -> Void = { _ in }) -> W {
            var file = W()
            file.items = [(1, "av01"), (2, "av01")]
            file.properties = [W.ispe(640, 480), W.box("av1C", W.av1C), W.ispe(160, 120)]
            file.associations = [(1, [1, 0x82]), (2, [3, 0x82])]
            file.references = [("thmb", 2, [1])]
            file.data = [(1, W.av1Frame), (2, W.av1Frame)]
            edit(&file)
            return file
        }
        func listed(_ file: W) throws -> [ISOBMFFThumbnail] {
            try #require(try StructureWalk.walk(file.bytes(), format: .avif)).thumbnails
        }
        let plain = try #require(try StructureWalk.walk(file().bytes(), format: .avif))
        #expect(plain.thumbnails.map { [$0.item, UInt32($0.width), UInt32($0.height), UInt32($0.tiles)] } == [[2, 160, 120, 0]])
        #expect(plain.primarySwap?.primaryIDSize == 2)
        let alpha = W.full("auxC", Array("urn:mpeg:mpegB:cicp:systems:auxiliary:alpha".utf8) + [0])
        func withAlpha(_ width: UInt32, _ height: UInt32) -> W {
            file { f in
                f.items.append((3, "av01"))
                f.properties += [W.ispe(width, height), alpha]
                f.associations.append((3, [4, 5, 0x82]))
                f.references.append(("auxl", 3, [2]))
                f.data.append((3, W.av1Frame))
            }
        }
        #expect(try listed(withAlpha(160, 120)).first?.hasAlpha == true)
        #expect(try listed(withAlpha(80, 60)).isEmpty, "an alpha plane of another size")
        let turned = try listed(file { $0.properties.append(W.box("irot", [1])); $0.associations[1].indices.append(4) })
        #expect(turned.first.map { [$0.width, $0.height] } == [120, 160])
        #expect(try listed(file { $0.properties.append(W.box("clap", [UInt8](repeating: 1, count: 32)))
            $0.associations[1].indices.append(4) }).isEmpty, "clap")
        #expect(try listed(file { $0.items[1] = (2, "hvc1") }).isEmpty, "HEVC in an AV1 file")
        #expect(try listed(file { f in
            f.items.append((3, "av01")); f.associations.append((3, [3, 0x82])); f.data.append((3, W.av1Frame))
            f.references = [("thmb", 2, [1, 3])]
        }).isEmpty, "a thmb naming two images")
        #expect(try listed(file { $0.properties[2] = W.box("free", []) }).isEmpty, "no ispe")
        #expect(try listed(file { $0.extraMeta = [W.box("free", [UInt8](repeating: 0, count: 1 << 20))] }).isEmpty,
                "a meta box over 1 MiB")
        // A grid of 2 tiles of 80×120 is one; of 5 tiles of 64×120, too many.
        for (columns, listedTiles) in [(2, 2), (5, 0)] {
            let tileWidth: UInt32 = columns == 2 ? 80 : 64
            let grid = try listed(file { f in
                let tiles = (0..<UInt32(columns)).map { $0 + 3 }
                f.items = [(1, "av01"), (2, "grid")] + tiles.map { ($0, "av01") }
                f.properties.append(W.ispe(tileWidth, 120))
                f.associations = [(1, [1, 0x82]), (2, [])] + tiles.map { ($0, [4, 0x82]) }   // the grid's size: its payload's
                f.references = [("thmb", 2, [1]), ("dimg", 2, tiles)]
                f.data = [(1, W.av1Frame), (2, W.gridPayload(rows: 1, columns: columns, width: tileWidth * UInt32(columns), height: 120))]
                    + tiles.map { ($0, W.av1Frame) }
            })
            #expect(grid.first?.tiles ?? 0 == listedTiles && grid.count == (listedTiles > 0 ? 1 : 0), "\(columns) tiles")
            if columns == 2 { #expect(grid.first.map { [$0.width, $0.height] } == [160, 120]) }
        }
    }

    /// The items' locations, as the structure walk read them.
    private func locations(_ bytes: [UInt8]) throws -> [UInt32: ISOBMFFLocations.Location] {
        try bytes.withUnsafeBytes { file throws -> [UInt32: ISOBMFFLocations.Location] in
            var boxes = 0
            var top = ISOBMFFBoxes(file, in: 0..<file.count)
            while let box = try top.next(counting: &boxes) {
                if box.type == FourCC("meta") { return try ISOBMFFMeta(box, file, boxes: &boxes).locations.items }
            }
            return [:]
        }
    }
}
