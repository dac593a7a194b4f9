import CThumbCodec
import Testing
import ThumbImaging
import ThumbTestSupport
@testable import ThumbCodec

/// Issue 27 item 2: an AVIF or HEIC render decodes the primary image's
/// thumbnail item when it covers the pre-crop result size (API.md § Formats
/// read, "Embedded thumbnails"). Fixtures: `thumbnail/` (heif-enc -t of
/// rocket.jpg, see Fixtures/SOURCES.md) and the Nokia `crowd_1440x960.heic`.
@Suite struct EmbeddedThumbnailTests {
    private static let limit = 1 << 24

    private func probe(_ bytes: [UInt8]) throws -> ImageHeader {
        try ImageDecoder.probe(bytes, maxPixels: Self.limit)
    }

    /// The decode for `need` rendered `inside` a w×h box by thumbd's own
    /// renderer, and how the decode went.
    private func render(_ bytes: [UInt8], box: (Int, Int), need: (width: Int, height: Int)? = nil,
                        thumbnail: Bool = true) throws -> (Bitmap, DecodeInfo) {
        let header = try probe(bytes)
        let geometry = try ThumbnailGeometry(sourceWidth: header.width, sourceHeight: header.height,
                                             width: box.0, height: box.1, fit: .inside, enlarge: false)
        var renderer = ThumbnailRenderer(geometry: geometry, orientation: header.orientation)
        let info = try ImageDecoder.decode(bytes, header: header,
                                           minimumDisplayedSize: need ?? (geometry.scaledWidth, geometry.scaledHeight),
                                           useEmbeddedThumbnail: thumbnail, into: &renderer)
        return (renderer.finish(), info)
    }

    @Test(arguments: ["rocket-t160.heic", "rocket-t160.avif"])
    func theWalkFindsTheThumbnail(name: String) throws {
        let header = try probe(Fixtures.bytes("thumbnail/\(name)"))
        #expect(header.width == 640 && header.height == 427)
        let thumbnails = header.isobmff?.thumbnails ?? []
        #expect(thumbnails.count == 1)
        #expect(thumbnails.first?.width == 160 && thumbnails.first?.height == 106 && thumbnails.first?.hasAlpha == false)
        // libavif needs the swap; libheif reads thumbnails itself.
        #expect((header.isobmff?.primarySwap != nil) == name.hasSuffix(".avif"))
    }

    /// A 128-px render decodes the 160×106 thumbnail (a tenth of the pixels),
    /// and looks like the primary image rendered to the same size. heif-enc
    /// scales its thumbnails by nearest neighbour, so they alias: 26–28 dB.
    @Test(arguments: ["rocket-t160.heic", "rocket-t160.avif"])
    func aSmallRenderDecodesTheThumbnail(name: String) throws {
        let bytes = Fixtures.bytes("thumbnail/\(name)")
        let thumbnail = try #require(try probe(bytes).isobmff?.thumbnails.first)
        let (fromThumbnail, info) = try render(bytes, box: (128, 128))
        #expect(info.thumbnailItem == thumbnail.item && info.width == 160 && info.height == 106)
        let (fromPrimary, primaryInfo) = try render(bytes, box: (128, 128), thumbnail: false)
        #expect(primaryInfo.thumbnailItem == nil && primaryInfo.width == 640 && primaryInfo.height == 427)
        #expect(fromThumbnail.width == 128 && fromThumbnail.height == 85)
        #expect(fromThumbnail.pixels != fromPrimary.pixels)
        let psnr = PSNR.premultiplied(fromThumbnail, fromPrimary)
        #expect(psnr > 25, "\(psnr) dB")
    }

    /// The thumbnail is used exactly while it covers the size the scaler
    /// needs on both axes; above that, and without `useEmbeddedThumbnail`
    /// (the canonical decode of `/info`), the primary image is decoded.
    @Test(arguments: ["rocket-t160.heic", "rocket-t160.avif"])
    func aLargerRenderDecodesThePrimary(name: String) throws {
        let bytes = Fixtures.bytes("thumbnail/\(name)")
        let header = try probe(bytes)
        for (need, thumbnail) in [((160, 106), true), ((161, 100), false), ((100, 107), false), ((320, 214), false),
                                  ((1, 106), true)] {
            #expect(ImageDecoder.usesEmbeddedThumbnail(header: header, minimumDisplayedSize: need) == thumbnail)
            var sink = BitmapSink()
            let info = try ImageDecoder.decode(bytes, header: header, minimumDisplayedSize: need,
                                               useEmbeddedThumbnail: true, into: &sink)
            #expect((info.thumbnailItem != nil) == thumbnail && info.width == (thumbnail ? 160 : 640))
        }
        var sink = BitmapSink()
        let canonical = try ImageDecoder.decode(bytes, header: header, minimumDisplayedSize: (1, 1), into: &sink)
        #expect(canonical.thumbnailItem == nil && canonical.width == 640)
        #expect(!ImageDecoder.usesEmbeddedThumbnail(header: header, minimumDisplayedSize: nil))
    }

    /// The thumbnail of rocket-t160-irot.* is stored turned 90° clockwise
    /// with an irot that turns it back: decoded with it, it is upright and
    /// 160×106 — the size the walk expects, else the primary would have
    /// been decoded — and matches the primary; turned the wrong way, it would not.
    @Test(arguments: ["rocket-t160-irot.heic", "rocket-t160-irot.avif"])
    func theThumbnailsIrotIsApplied(name: String) throws {
        let bytes = Fixtures.bytes("thumbnail/\(name)")
        let thumbnail = try #require(try probe(bytes).isobmff?.thumbnails.first)
        #expect(thumbnail.width == 160 && thumbnail.height == 106)
        let (fromThumbnail, info) = try render(bytes, box: (128, 128))
        #expect(info.thumbnailItem == thumbnail.item && info.width == 160 && info.height == 106)
        let (fromPrimary, _) = try render(bytes, box: (128, 128), thumbnail: false)
        let psnr = PSNR.premultiplied(fromThumbnail, fromPrimary)
        #expect(psnr > 25, "\(psnr) dB")
        let upsideDown = PSNR.premultiplied(fromThumbnail, fromPrimary.oriented(Orientation(exifValue: 3)))
        #expect(upsideDown < psnr - 10, "\(upsideDown) dB upside down, \(psnr) dB upright")
    }

    /// heif-enc gives the thumbnail no colr box (HEIC) or an nclx of 2/2/6,
    /// which describes no colour space (AVIF): the thumbnail then takes the
    /// primary's colour — here rocket.jpg's Adobe RGB profile — as the
    /// decoder reports it, byte for byte.
    @Test(arguments: ["rocket-t160.heic", "rocket-t160.avif"])
    func aThumbnailWithoutColourTakesThePrimarysProfile(name: String) throws {
        let bytes = Fixtures.bytes("thumbnail/\(name)")
        let header = try probe(bytes)
        let t = try #require(header.isobmff?.thumbnails.first)
        var item = thumbd_thumbnail()
        item.item = t.item
        item.width = UInt32(t.width)
        item.height = UInt32(t.height)
        if let swap = header.isobmff?.primarySwap {
            item.meta_offset = UInt64(swap.meta.lowerBound)
            item.meta_length = UInt64(swap.meta.count)
            item.primary_id_offset = UInt64(swap.primaryIDOffset)
            item.primary_id_size = UInt32(swap.primaryIDSize)
            item.reference_type_offset = UInt64(t.referenceTypeOffset)
        }
        func profile(thumbnail: Bool) -> [UInt8]? {
            var status: Int32 = 0, width: UInt32 = 0, height: UInt32 = 0
            var message = [CChar](repeating: 0, count: 256)
            let decoder = bytes.withUnsafeBytes { raw -> OpaquePointer? in
                switch (thumbnail, name.hasSuffix(".heic")) {
                case (true, true): thumbd_heif_open_thumbnail(raw.baseAddress, raw.count, UInt64(Self.limit), 1, &item, &width,
                                                              &height, &status, &message, message.count)
                case (true, false): thumbd_avif_open_thumbnail(raw.baseAddress, raw.count, UInt64(Self.limit), &item, &width,
                                                               &height, &status, &message, message.count)
                case (false, true): thumbd_heif_open(raw.baseAddress, raw.count, UInt64(Self.limit), 1, &width, &height,
                                                     &status, &message, message.count)
                case (false, false): thumbd_avif_open(raw.baseAddress, raw.count, UInt64(Self.limit), &width, &height,
                                                      &status, &message, message.count)
                }
            }
            guard let decoder else { return nil }
            defer { thumbd_decoder_close(decoder) }
            #expect(width == (thumbnail ? 160 : 640))
            var bytes: UnsafeRawPointer?
            var length = 0
            var nclx = thumbd_nclx()
            thumbd_decoder_color(decoder, &bytes, &length, &nclx)
            return bytes.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) }
        }
        let primary = try #require(profile(thumbnail: false))
        #expect(primary.count > 500 && Array(primary[36..<40]) == Array("acsp".utf8))
        #expect(profile(thumbnail: true) == primary)
    }

    /// A translucent primary uses a thumbnail with alpha, and never an opaque
    /// one (heif-enc --no-thumb-alpha): that one would lose the transparency.
    /// 80×52 for 320×214 (libheif rounds 53.5 down to even) is within the
    /// aspect rule.
    @Test(arguments: ["alpha-t80.heic", "alpha-t80.avif", "alpha-t80-opaque-thumbnail.heic"])
    func alphaMustMatch(name: String) throws {
        let bytes = Fixtures.bytes("thumbnail/\(name)")
        let header = try probe(bytes)
        #expect(header.hasAlpha && header.width == 320 && header.height == 214)
        let thumbnail = try #require(header.isobmff?.thumbnails.first)
        #expect(thumbnail.width == 80 && thumbnail.height == 52)
        let opaque = name.contains("opaque")
        #expect(thumbnail.hasAlpha == !opaque)
        let (fromThumbnail, info) = try render(bytes, box: (64, 64))
        #expect((info.thumbnailItem != nil) == !opaque)
        let (fromPrimary, _) = try render(bytes, box: (64, 64), thumbnail: false)
        #expect(!fromThumbnail.isOpaque)
        let psnr = PSNR.premultiplied(fromThumbnail, fromPrimary)
        #expect(opaque ? psnr == .infinity : psnr > 25, "\(psnr) dB")
    }

    /// A file thumbd did not make: the Nokia HEIF conformance file's 240×160
    /// thumbnail (no colr, like its primary) serves a 200-px render.
    @Test func theNokiaFilesThumbnailServesASmallRender() throws {
        let bytes = Fixtures.bytes("formats/crowd_1440x960.heic")
        let (fromThumbnail, info) = try render(bytes, box: (200, 200))
        #expect(info.thumbnailItem == 1005 && info.width == 240 && info.height == 160)
        let (fromPrimary, _) = try render(bytes, box: (200, 200), thumbnail: false)
        let psnr = PSNR.premultiplied(fromThumbnail, fromPrimary)
        #expect(psnr > 24, "\(psnr) dB")
        #expect(try render(bytes, box: (300, 300)).1.thumbnailItem == nil)
    }
}
