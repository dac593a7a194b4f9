import Foundation
import Testing
import ThumbCodec
import ThumbImaging

/// Every WebP, GIF, AVIF and HEIC fixture decodes to what an independent
/// decoder produced (Fixtures/make-format-reference.py: Pillow with its own
/// libwebp 1.6 and libavif 1.4, pillow-heif with libheif 1.23).
@Suite struct FormatReferenceTests {
    /// WebP (libwebp 1.2.4 here, 1.6 in Pillow) and GIF must agree exactly;
    /// AV1 and HEVC decoders and their YCbCr→RGB conversions may round
    /// differently, but an orientation, chroma or range mistake costs far more
    /// than these margins (a mirrored photo scores under 20 dB).
    static func minimumPSNR(_ name: String) -> Double {
        if name.hasSuffix(".avif") { return 40 }
        if name.hasSuffix(".heic") { return 45 }
        return .infinity
    }

    static let stills = FormatReference.all().filter { !$0.name.contains("@") }.map(\.name)

    @Test(arguments: stills)
    func decodeMatchesTheIndependentDecoder(_ name: String) throws {
        let reference = FormatReference.named(name)
        let (bitmap, _) = try ImageDecoder.decodeBitmap(Fixtures.bytes("formats/\(name)"), maxPixels: 1 << 24)
        #expect(bitmap.width == reference.width && bitmap.height == reference.height)
        let psnr = try reference.psnr(of: bitmap)
        #expect(psnr >= Self.minimumPSNR(name), "\(name): \(psnr) dB")
    }

    @Test func theReferenceSetCoversEveryFormatAndVariant() {
        #expect(Self.stills.count == 27)
        for suffix in [".webp", ".gif", ".avif", ".heic"] {
            #expect(Self.stills.contains { $0.hasSuffix(suffix) }, "\(suffix)")
        }
    }

    /// Issue 19 item 11: a lossless WebP whose VP8L header says it has no
    /// alpha is opaque, whatever alpha its pixels were coded with (a quarter
    /// of bad_palette_index.webp's are 0), as dwebp, Pillow and browsers show
    /// it; at full size and through libwebp's scaler alike.
    @Test func aLosslessWebPWhoseHeaderSaysNoAlphaIsOpaque() throws {
        let data = Fixtures.bytes("formats/bad_palette_index.webp")
        let header = try ImageDecoder.probe(data, maxPixels: 1 << 20)
        #expect(header.isLossless && !header.hasAlpha)
        let (bitmap, _) = try ImageDecoder.decodeBitmap(data, maxPixels: 1 << 20)
        let opaque = bitmap.isOpaque   // (not the bitmap itself in a failure message)
        #expect(opaque)
        let psnr = try FormatReference.named("bad_palette_index.webp").psnr(of: bitmap)
        #expect(psnr == .infinity)
        var sink = BitmapSink()
        let info = try ImageDecoder.decode(data, header: header, minimumDisplayedSize: (32, 32), into: &sink)
        let scaledOpaque = try #require(sink.bitmap()).isOpaque
        #expect(info.scaleNumerator == 2 && info.width == 32 && scaledOpaque)
    }

    /// Shrink on load: the smallest M/8 that still covers the displayed size,
    /// as for JPEG, through libwebp's scaler; the result is close to a box
    /// filter of the full decode.
    @Test func anOpaqueWebPIsDecodedAtTheSmallestSufficientScale() throws {
        let data = Fixtures.bytes("formats/vp80-02-inter-1402.webp")   // 176×144
        let header = try ImageDecoder.probe(data, maxPixels: 1 << 20)
        var sink = BitmapSink()
        let info = try ImageDecoder.decode(data, header: header, minimumDisplayedSize: (80, 60), into: &sink)
        #expect(info.width == 88 && info.height == 72 && info.scaleNumerator == 4)
        let bitmap = try #require(sink.bitmap())
        let reference = try FormatReference.named("vp80-02-inter-1402.webp@4").pixels()
        #expect(BitmapPSNR.rgb(bitmap, reference) > 30)
        #expect(ImageDecoder.estimatedDecodeMemory(header: header, minimumDisplayedSize: (80, 60)) == 88 * 72 * 4)
        // Nothing to gain: full size.
        var full = CountingSink()
        #expect(try ImageDecoder.decode(data, header: header, minimumDisplayedSize: (170, 100), into: &full).scaleNumerator == 8)
    }

    /// libwebp's scaler does not premultiply lossy colour by alpha, so images
    /// with alpha, and animations, are always decoded at full size.
    @Test(arguments: ["photo-alpha.webp", "animated.webp", "lossless2.webp"])
    func webPsWithAlphaAreNeverScaled(_ name: String) throws {
        let data = Fixtures.bytes("formats/\(name)")
        let header = try ImageDecoder.probe(data, maxPixels: 1 << 20)
        var sink = CountingSink()
        let info = try ImageDecoder.decode(data, header: header, minimumDisplayedSize: (8, 8), into: &sink)
        #expect(info.width == header.width && info.height == header.height && info.scaleNumerator == 8)
        #expect(sink.rows == header.height)
    }
}
