import Testing
import ThumbCodec
import ThumbImaging

/// AVIF through libavif: the transforms it only reports (irot, imir, clap)
/// are applied by the shim, bands of rows join without seams, and bad files
/// are typed errors. Pixel agreement with an independent decoder is
/// FormatReferenceTests' job; here the same AV1 payload is compared with itself.
@Suite struct AVIFDecoderTests {
    private func decode(_ name: String) throws -> (bitmap: Bitmap, header: ImageHeader) {
        try ImageDecoder.decodeBitmap(Fixtures.bytes("formats/\(name)"), maxPixels: 1 << 22)
    }

    /// photo-irot3/photo-imir1/avif-extra/photo-clap.avif carry the very AV1
    /// payload of photo-420.avif (avifenc is deterministic), so each must be
    /// exactly the plain decode turned, mirrored or cropped: any slip in the
    /// mapping or at a band boundary (64 lines; the transposed image is read
    /// in bands of columns) changes pixels.
    @Test func irotAndImirTurnThePlainDecodeExactly() throws {
        let plain = try decode("photo-420.avif").bitmap
        #expect(plain.width == 160 && plain.height == 107)
        // irot 3: 270° anticlockwise, i.e. Exif 6 (turn right to view).
        let (turned, turnedHeader) = try decode("photo-irot3.avif")
        #expect(turnedHeader.width == 107 && turnedHeader.height == 160 && turnedHeader.orientation == .up)
        #expect(turned == plain.oriented(Orientation(exifValue: 6)))
        // imir 1: left and right exchanged, Exif 2.
        let mirrored = try decode("photo-imir1.avif").bitmap
        #expect(mirrored == plain.oriented(Orientation(exifValue: 2)))
        #expect(mirrored != plain)
    }

    @Test func cleanApertureCropsThePicture() throws {
        let plain = try decode("photo-420.avif").bitmap
        let (cropped, header) = try decode("avif-extra/photo-clap.avif")   // avifenc --crop 8,6,140,90
        #expect(header.width == 140 && header.height == 90)
        #expect(cropped == plain.cropped(x: 8, y: 6, width: 140, height: 90))
    }

    /// Premultiplied colour is divided out again: where alpha is half or
    /// more, the result is on average within a few levels of the
    /// straight-alpha file's decode (Pillow's decodes of the two differ by
    /// 2.6 on average; left premultiplied, ours would differ by 16).
    @Test func premultipliedAlphaComesOutStraight() throws {
        let straight = try decode("photo-alpha.avif").bitmap
        let (premultiplied, header) = try decode("photo-premultiplied.avif")
        #expect(header.hasAlpha)
        #expect(BitmapPSNR.alpha(premultiplied, straight) > 45)
        var total = 0, count = 0
        for y in 0..<straight.height {
            for x in 0..<straight.width where straight[x, y].a > 128 {
                let a = premultiplied[x, y], b = straight[x, y]
                total += abs(Int(a.r) - Int(b.r)) + abs(Int(a.g) - Int(b.g)) + abs(Int(a.b) - Int(b.b))
                count += 3
            }
        }
        let mean = Double(total) / Double(count)
        #expect(count > 10_000 && mean < 6, "mean difference \(mean) over \(count) samples")
    }

    @Test func twelveBitAndGridSourcesDecode() throws {
        let (deep, deepHeader) = try decode("photo-12bit.avif")
        #expect(deepHeader.bitDepth == 12 && deep.width == 160 && deep.height == 107)
        let (grid, gridHeader) = try decode("photo-grid.avif")   // 2×1 tiles of 80×106
        #expect(gridHeader.width == 160 && gridHeader.height == 106 && grid.height == 106)
    }

    /// The primary item when there is one; a sequence without one gives its
    /// first frame (red; the second is blue).
    @Test(arguments: ["sequence.avif", "sequence-no-primary-item.avif"])
    func imageSequencesGiveTheirFirstFrame(_ name: String) throws {
        let (bitmap, header) = try decode("avif-extra/\(name)")
        #expect(header.format == .avif && bitmap.width == 64 && bitmap.height == 48)
        let pixel = bitmap[32, 24]
        #expect(pixel.r > 240 && pixel.g < 16 && pixel.b < 16, "\(pixel)")
    }

    /// Cut inside the boxes and inside the AV1 data: corrupt, never a picture.
    @Test func truncatedFilesAreCorrupt() throws {
        let whole = Fixtures.bytes("formats/photo-alpha.avif")
        let mdat = try #require((0..<whole.count - 4).first { Array(whole[$0..<$0 + 4]) == Array("mdat".utf8) })
        for cut in [40, mdat - 8, mdat + 100, whole.count - 1] {
            do {
                _ = try ImageDecoder.decodeBitmap(Array(whole.prefix(cut)), maxPixels: 1 << 22)
                Issue.record("cut at \(cut) of \(whole.count) decoded")
            } catch {
                guard case .corrupt = error else {
                    Issue.record("cut at \(cut): \(error), not corrupt")
                    continue
                }
            }
        }
    }

    /// Found by the codec fuzzer: an AV1 item libavif refuses. It is corrupt
    /// here, not handed to libheif, whose dav1d path leaked 40 bytes on it
    /// (the ASan suite's LeakSanitizer checks that nothing leaks now).
    @Test func aBrokenAV1FileIsCorruptWithoutTheLibheifFallback() throws {
        let broken = Fixtures.bytes("formats/avif-extra/fuzz-broken-av1.avif")
        #expect(!broken.indices.dropLast(3).contains { Array(broken[$0..<$0 + 4]) == Array("hvcC".utf8) })
        #expect(throws: CodecError.self) { try ImageDecoder.decodeBitmap(broken, maxPixels: 1 << 22) }
    }

    /// The other way round: an AV1 image under a HEIF brand has no hvcC box,
    /// so it is decoded by libavif, never by libheif's dav1d path.
    @Test func anAV1FileUnderAHEIFBrandIsDecodedByLibavif() throws {
        try expectRebrandedDecodesTheSame("formats/photo-420.avif", from: "avif", to: "heic", sniffedAs: .heic)
    }

    /// A file branded AVIF whose primary item is HEVC is still decoded
    /// (by libheif, as every AVIF was before libavif took them).
    @Test func anAVIFBrandedHEVCFileFallsBackToLibheif() throws {
        try expectRebrandedDecodesTheSame("formats/photo-alpha.heic", from: "heic", to: "avif", sniffedAs: .avif)
    }

    /// The fixture with its major brand `from` replaced by `to`: sniffed by
    /// the new brand, decoded to exactly the original's pixels.
    private func expectRebrandedDecodesTheSame(_ name: String, from: String, to: String, sniffedAs format: ImageFormat,
                                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        let original = Fixtures.bytes(name)
        #expect(Array(original[8..<12]) == Array(from.utf8), sourceLocation: sourceLocation)
        var branded = original
        branded.replaceSubrange(8..<12, with: Array(to.utf8))
        let (bitmap, header) = try ImageDecoder.decodeBitmap(branded, maxPixels: 1 << 22)
        #expect(header.format == format, "sniffed by its brand", sourceLocation: sourceLocation)
        #expect(bitmap == (try ImageDecoder.decodeBitmap(original, maxPixels: 1 << 22).bitmap), sourceLocation: sourceLocation)
    }
}
