import CThumbCodec
import Foundation
import Testing
import ThumbCodec
import ThumbImaging

/// WebP `ICCP`, HEIF/AVIF `colr` (ICC and nclx) are converted to sRGB like
/// JPEG and PNG profiles (API.md § Output "Colour"). The fixtures are
/// lossless encodes of the pixels the JPEG/PNG references were made from
/// (Fixtures/icc/make-format-fixtures.sh), so the same Pillow ImageCms
/// references apply; the nclx references are computed from the published
/// definitions (make-format-references.py). Tolerances are over 0…255.
@Suite struct FormatColorTests {
    static func decode(_ name: String) throws -> Bitmap { try ICC.decode(Fixtures.bytes("icc/formats/\(name)")) }

    /// Untagged testorig pixels: what ignoring the colour description would give.
    let unconverted: Bitmap

    init() throws { unconverted = try ICC.decode(Fixtures.bytes("testorig.jpg")) }

    /// Display P3 as an ICC profile in each container, and as nclx 12/13 (no
    /// ICC involved: the matrix comes from H.273's primaries), all match lcms's
    /// conversion of the same pixels. The HEIC is x265 "lossless", off by up
    /// to 1, so its reference is pillow-heif's decode of it through ImageCms.
    @Test(arguments: [("p3-icc.webp", "p3-testorig.png"), ("p3-icc.avif", "p3-testorig.png"),
                      ("p3-icc.heic", "p3-heic.png"), ("p3-nclx.avif", "p3-testorig.png")])
    func displayP3MatchesTheReference(_ name: String, _ referenceName: String) throws {
        let reference = try ICC.reference(referenceName)
        let bitmap = try Self.decode(name)
        #expect(ICC.meanDifference(bitmap, reference) < 0.3)
        #expect(ICC.maxDifference(bitmap, reference) <= 2)
        #expect(ICC.psnr(bitmap, reference) > 55)
        #expect(ICC.meanDifference(unconverted, reference) > 3)
    }

    /// A WebP thumbnail (shrink-on-load at 3/8 for 75×49) resamples in P3's
    /// linear light and converts the small result, as the PNG path does. So
    /// it matches the thumbnail of the P3 PNG of the same pixels, except for
    /// libwebp's rescaler, which averages the 3/8 step in gamma space: the
    /// same untagged pixels as WebP and PNG differ by a mean of 1.27 (max 44,
    /// at sharp edges); with the P3 profile the mean is 1.38.
    @Test func displayP3WebPThumbnailMatchesThePNGPath() throws {
        let geometry = try ThumbnailGeometry(sourceWidth: 227, sourceHeight: 149, width: 75, height: 49,
                                             fit: .fill, enlarge: false)
        func thumbnail(_ data: [UInt8]) throws -> (Bitmap, DecodeInfo) {
            var renderer = ThumbnailRenderer(geometry: geometry, orientation: .up)
            let info = try ImageDecoder.decode(data, header: try ImageDecoder.probe(data, maxPixels: 1 << 20),
                                               minimumDisplayedSize: (75, 49), into: &renderer)
            return (renderer.finish(), info)
        }
        let (webp, info) = try thumbnail(Fixtures.bytes("icc/formats/p3-icc.webp"))
        let (png, _) = try thumbnail(Fixtures.bytes("icc/p3-testorig.png"))
        let (plain, _) = try thumbnail(Fixtures.bytes("testorig.jpg"))
        #expect(info.scaleNumerator < 8, "shrink-on-load was used")
        #expect(ICC.meanDifference(webp, png) < 1.5)
        #expect(ICC.meanDifference(plain, png) > 3)
    }

    /// A LUT profile in a lossless RGBA WebP goes through the lcms2 transform;
    /// alpha comes through untouched.
    @Test func lutProfileInWebPKeepsAlpha() throws {
        let reference = try ICC.reference("lut-rgba.png")
        let bitmap = try Self.decode("lut-icc-rgba.webp")
        #expect(ICC.maxDifference(bitmap, reference) <= 1)
        #expect(stride(from: 3, to: bitmap.pixels.count, by: 4).allSatisfy { bitmap.pixels[$0] == reference.pixels[$0] })
    }

    /// BT.2020 primaries (nclx 9/13) against ITU-R BT.2087's published matrix.
    @Test func bt2020NCLXMatchesTheReference() throws {
        let reference = try ICC.reference("bt2020-testorig.png")
        let bitmap = try Self.decode("bt2020-nclx.avif")
        #expect(ICC.meanDifference(bitmap, reference) < 0.3)
        #expect(ICC.maxDifference(bitmap, reference) <= 2)
        #expect(ICC.meanDifference(unconverted, reference) > 5)
    }

    /// PQ and HLG (BT.2020 primaries) are not tone mapped: reference white
    /// becomes sRGB white and brighter values clip.
    @Test(arguments: [("pq-nclx-ramp.avif", "pq-ramp.png"), ("hlg-nclx-ramp.avif", "hlg-ramp.png")])
    func hdrTransfersClipAtReferenceWhite(_ name: String, _ referenceName: String) throws {
        let reference = try ICC.reference(referenceName)
        let bitmap = try Self.decode(name)
        let plain = try ICC.decode(Fixtures.bytes("icc/formats/ramp.png"))
        #expect(ICC.meanDifference(bitmap, reference) < 0.5)
        #expect(ICC.maxDifference(bitmap, reference) <= 2)
        #expect(ICC.meanDifference(plain, reference) > 10)
        // The gray band's top end is far above reference white: pure white.
        let top = bitmap[255, 0]
        #expect(top.r == 255 && top.g == 255 && top.b == 255)
    }

    /// With an ICC profile (P3) and an nclx box (BT.2020) both present, the
    /// ICC profile decides, as libheif's own API documents.
    @Test func iccProfileWinsOverNCLX() throws {
        let both = try Self.decode("p3-icc-bt2020-nclx.avif")
        #expect(both == (try Self.decode("p3-icc.avif")))
        #expect(ICC.meanDifference(both, try Self.decode("bt2020-nclx.avif")) > 1)
    }

    /// nclx codes that mean sRGB (BT.709 primaries, sRGB or BT.709-family
    /// transfer, unspecified) convert nothing; Display P3's matrix is the
    /// well-known one (to four decimals).
    @Test func nclxCodes() {
        var curves = [Float](repeating: 0, count: 768)
        var matrix = [Float](repeating: 0, count: 9)
        for (p, t) in [(1, 13), (1, 1), (2, 2), (0, 0), (1, 6), (2, 15), (10, 13)] {
            var nclx = thumbd_nclx(primaries: Int32(p), transfer: Int32(t))
            #expect(thumbd_nclx_matrix_shaper(&nclx, &curves, &matrix) == 0, "\(p)/\(t)")
        }
        var p3 = thumbd_nclx(primaries: 12, transfer: 13)
        #expect(thumbd_nclx_matrix_shaper(&p3, &curves, &matrix) == 1)
        let known: [Float] = [1.2249, -0.2249, 0, -0.0421, 1.0421, 0, -0.0196, -0.0786, 1.0983]
        for i in 0..<9 { #expect(abs(matrix[i] - known[i]) < 6e-4, "P3 matrix[\(i)] = \(matrix[i])") }
        #expect(SourceColorSpace(curves: curves, matrix: matrix) != .sRGB)
        // BT.709 primaries with a gamma-2.2 transfer: curves only, identity matrix.
        var gamma = thumbd_nclx(primaries: 1, transfer: 4)
        #expect(thumbd_nclx_matrix_shaper(&gamma, &curves, &matrix) == 1)
        #expect(matrix == [1, 0, 0, 0, 1, 0, 0, 0, 1])
        #expect(abs(curves[128] - powf(128 / 255, 2.2)) < 1e-5)
    }
}

