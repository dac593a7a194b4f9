import Testing
import ThumbCodec
import ThumbImaging

@Suite struct FormatProbeTests {
    private func probe(_ name: String) throws -> ImageHeader {
        try ImageDecoder.probe(Fixtures.bytes("formats/\(name)"), maxPixels: 1 << 24)
    }

    @Test func headersReportFormatSizeAlphaAndDepth() throws {
        let cases: [(String, ImageFormat, Int, Int, Bool, Int)] = [
            ("vp80-00-comprehensive-001.webp", .webp, 176, 144, false, 8),
            ("alpha_filter_1_method_1.webp", .webp, 128, 128, true, 8),
            ("lossless2.webp", .webp, 1000, 307, true, 8),
            ("photo-transparent.gif", .gif, 160, 107, true, 8),
            ("Link-U-fox.profile0.8bpc.yuv420.odd-height.avif", .avif, 1204, 799, false, 8),
            ("photo-alpha.avif", .avif, 160, 107, true, 8),
            ("photo-10bit.avif", .avif, 160, 107, false, 10),
            ("crowd_1440x960.heic", .heic, 1440, 960, false, 8),
            ("photo-alpha.heic", .heic, 160, 107, true, 8),
            ("photo-10bit.heic", .heic, 160, 107, false, 10),
        ]
        for (name, format, width, height, alpha, bits) in cases {
            let h = try probe(name)
            #expect(h.format == format && h.width == width && h.height == height && h.hasAlpha == alpha
                    && h.bitDepth == bits && h.orientation == .up && !h.isAnimated, "\(name): \(h)")
        }
        #expect(try probe("photo-interlaced.gif").isProgressive)
        #expect(try !probe("photo-transparent.gif").isProgressive)
    }

    /// The first frame on a transparent canvas of the canvas / logical screen size.
    @Test func animatedWebPGivesItsFirstFrameOnTheCanvas() throws {
        let (bitmap, header) = try ImageDecoder.decodeBitmap(Fixtures.bytes("formats/animated.webp"), maxPixels: 1 << 20)
        #expect(header.isAnimated && header.hasAlpha && header.width == 64 && header.height == 48)
        #expect(bitmap[0, 0] == (0, 0, 0, 0) && bitmap[63, 47] == (0, 0, 0, 0) && bitmap[9, 20] == (0, 0, 0, 0))
        // The frame (40×30 at 10,8) holds the left end of a left-to-right alpha ramp (0…63).
        #expect(bitmap[49, 20].a > 50 && (20...45).contains(bitmap[30, 20].a) && bitmap[50, 20] == (0, 0, 0, 0))
    }

    @Test func animatedGIFGivesItsFirstFrameOnTheScreen() throws {
        let (bitmap, header) = try ImageDecoder.decodeBitmap(Fixtures.bytes("formats/animated.gif"), maxPixels: 1 << 20)
        #expect(header.format == .gif && header.hasAlpha && header.isProgressive && header.width == 24 && header.height == 16)
        // Outside the 12×8 frame at (4,3): transparent (the second, full-screen frame is not shown).
        for (x, y) in [(0, 0), (3, 3), (16, 3), (4, 11), (23, 15)] { #expect(bitmap[x, y] == (0, 0, 0, 0), "(\(x),\(y))") }
        // Inside: left half red, right half green above blue; index 3 (every 5th diagonal) transparent.
        #expect(bitmap[4 + 1, 3 + 0] == (224, 16, 16, 255))
        #expect(bitmap[4 + 8, 3 + 1] == (16, 192, 16, 255))
        #expect(bitmap[4 + 8, 3 + 6] == (16, 16, 224, 255))
        #expect(bitmap[4 + 0, 3 + 0] == (0, 0, 0, 0) && bitmap[4 + 2, 3 + 3] == (0, 0, 0, 0))
    }

    /// irot/imir are applied (by the shim for AVIF, by libheif for HEIC); the
    /// Exif orientation 6 in the same file is ignored, so the picture is
    /// turned exactly once (API.md § Output).
    @Test func heifTransformsAreAppliedAndExifOrientationIgnored() throws {
        let data = Fixtures.bytes("formats/photo-irot1-imir0-exif6.avif")
        let header = try ImageDecoder.probe(data, maxPixels: 1 << 20)
        #expect(header.orientation == .up && header.width == 107 && header.height == 160)
        #expect(header.displayedWidth == 107 && header.displayedHeight == 160)
        let (bitmap, _) = try ImageDecoder.decodeBitmap(data, maxPixels: 1 << 20)
        #expect(bitmap.width == 107 && bitmap.height == 160)
    }

    @Test func alphaSurvivesInEveryFormat() throws {
        for name in ["photo-alpha.webp", "photo-alpha.avif", "photo-alpha.heic", "photo-transparent.gif"] {
            let (bitmap, header) = try ImageDecoder.decodeBitmap(Fixtures.bytes("formats/\(name)"), maxPixels: 1 << 20)
            #expect(header.hasAlpha && !bitmap.isOpaque, "\(name)")
            // The hole (an ellipse around 115,45 in the AVIF/HEIC/WebP source, 45,37 in the GIF) is clear.
            let hole = name.hasSuffix(".gif") ? bitmap[45, 37] : bitmap[115, 45]
            #expect(hole.a < 8, "\(name): \(hole)")
        }
    }

    @Test func webPExifChunkWithAJPEGStylePrefixIsRead() throws {
        #expect(try probe("orient-6-exif-prefix.webp").orientation == .right)
    }

    /// API.md § Output: decided by the bytes; for ISO-BMFF by the ftyp brands.
    @Test func sniffingUsesMagicBytesAndBrands() {
        func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
            let size = 16 + 4 * compatible.count
            return [0, 0, 0, UInt8(size)] + Array("ftyp\(major)".utf8) + [0, 0, 0, 0]
                + compatible.flatMap { Array($0.utf8) } + [0, 0, 0, 8] + Array("meta".utf8)
        }
        #expect(ImageFormat.sniff(Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8)) == .webp)
        #expect(ImageFormat.sniff(Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVEfmt ".utf8)) == nil)
        #expect(ImageFormat.sniff(Array("GIF87a".utf8)) == .gif && ImageFormat.sniff(Array("GIF89a".utf8)) == .gif)
        #expect(ImageFormat.sniff(Array("GIF88a".utf8)) == nil)
        #expect(ImageFormat.sniff(ftyp("avif", ["mif1", "miaf"])) == .avif)
        #expect(ImageFormat.sniff(ftyp("avis", ["msf1"])) == .avif)
        #expect(ImageFormat.sniff(ftyp("mif1", ["mif1", "avif"])) == .avif)
        #expect(ImageFormat.sniff(ftyp("heic", ["mif1"])) == .heic)
        #expect(ImageFormat.sniff(ftyp("mif1", ["heic"])) == .heic)
        #expect(ImageFormat.sniff(ftyp("msf1", ["hevc"])) == .heic)
        #expect(ImageFormat.sniff(ftyp("heix", [])) == .heic)
        #expect(ImageFormat.sniff(ftyp("mif1", [])) == .heic)
        #expect(ImageFormat.sniff(ftyp("mp41", ["isom", "mp42"])) == nil)
        #expect(ImageFormat.sniff(ftyp("crx ", ["isom"])) == nil)
        // A brand beyond the box's declared size does not count.
        var short = ftyp("mp41", ["avif"])
        short[3] = 16
        #expect(ImageFormat.sniff(short) == nil)
        for name in ["photo-alpha.heic", "crowd_1440x960.heic", "Microsoft-still_picture.avif", "photo-alpha.avif"] {
            #expect(ImageFormat.sniff(Fixtures.bytes("formats/\(name)"))?.rawValue == String(name.split(separator: ".").last!))
        }
    }

    /// The memory budget counts what each decoder holds besides its output.
    @Test func decodeMemoryEstimatesCountEachDecodersBuffers() throws {
        let lossless = try probe("lossless2.webp")
        #expect(ImageDecoder.estimatedDecodeMemory(header: lossless, minimumDisplayedSize: nil) == 1000 * 307 * 8)
        let interlaced = try probe("photo-interlaced.gif")
        #expect(ImageDecoder.estimatedDecodeMemory(header: interlaced, minimumDisplayedSize: nil) == 160 * 107 * 5)
        let heic = try probe("crowd_1440x960.heic")
        #expect(ImageDecoder.estimatedDecodeMemory(header: heic, minimumDisplayedSize: (100, 100)) > 1440 * 960 * 4)
    }
}
