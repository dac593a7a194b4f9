import CThumbCodec
import Testing
import ThumbCodec
import ThumbImaging

/// orient-N.{jpg,png} store the upright picture (four coloured quadrants) transformed
/// by the inverse of EXIF orientation N and tagged N (see Fixtures/SOURCES.md).
@Suite struct OrientationTests {
    private static let quadrants: [(x: Int, y: Int, rgb: (Int, Int, Int))] = [
        (8, 6, (0xE0, 0x10, 0x10)), (24, 6, (0x10, 0xC0, 0x10)),
        (8, 18, (0x10, 0x10, 0xE0)), (24, 18, (0xF0, 0xF0, 0xF0)),
    ]

    @Test(arguments: ["jpg", "png", "webp"], 1...8)
    func headerReportsTheOrientation(_ ext: String, _ n: Int) throws {
        let header = try ImageDecoder.probe(Fixtures.bytes("orient/orient-\(n).\(ext)"), maxPixels: 1 << 20)
        #expect(header.orientation.rawValue == n)
        #expect(header.displayedWidth == 32 && header.displayedHeight == 24)
    }

    /// Decoded and rendered, every file comes out upright and unmirrored.
    @Test(arguments: ["jpg", "png", "webp"], 1...8)
    func rendersUprightAndUnmirrored(_ ext: String, _ n: Int) throws {
        let data = Fixtures.bytes("orient/orient-\(n).\(ext)")
        let header = try ImageDecoder.probe(data, maxPixels: 1 << 20)
        let geometry = try ThumbnailGeometry(sourceWidth: header.displayedWidth, sourceHeight: header.displayedHeight,
                                             width: 32, height: 32, fit: .inside, enlarge: false)
        var renderer = ThumbnailRenderer(geometry: geometry, orientation: header.orientation)
        try ImageDecoder.decode(data, header: header, minimumDisplayedSize: (32, 24), into: &renderer)
        let bitmap = renderer.finish()
        #expect(bitmap.width == 32 && bitmap.height == 24)
        for q in Self.quadrants {
            let p = bitmap[q.x, q.y]
            let error = abs(Int(p.r) - q.rgb.0) + abs(Int(p.g) - q.rgb.1) + abs(Int(p.b) - q.rgb.2)
            #expect(error < 30, "orientation \(n) \(ext): pixel (\(q.x),\(q.y)) is \(p)")
        }
    }

    /// An XMP APP1 segment before the Exif APP1 must not hide the orientation.
    @Test func aSecondAPP1SegmentDoesNotConfuseTheProbe() throws {
        let original = Fixtures.bytes("orient/orient-6.jpg")
        let xmpPayload = Array("http://ns.adobe.com/xap/1.0/\0<x:xmpmeta tiff:Orientation=\"3\"/>".utf8)
        let length = xmpPayload.count + 2
        let xmp: [UInt8] = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 255)] + xmpPayload
        let withXMPFirst = Array(original.prefix(2)) + xmp + Array(original.dropFirst(2))
        #expect(try ImageDecoder.probe(withXMPFirst, maxPixels: 1 << 20).orientation == .right)
        // A second, bogus Exif APP1 later in the file does not override the first.
        let bogusPayload = Array("Exif\0\0MM\0*\0\0\0\u{8}\0\u{1}\u{1}\u{12}\0\u{3}\0\0\0\u{1}\0\u{3}\0\0".utf8)
        let bogus: [UInt8] = [0xFF, 0xE1, 0, UInt8(bogusPayload.count + 2)] + bogusPayload
        let sos = try #require((2..<original.count - 1).first { original[$0] == 0xFF && original[$0 + 1] == 0xDA })
        let withTwoExif = Array(original.prefix(sos)) + bogus + Array(original.suffix(from: sos))
        #expect(try ImageDecoder.probe(withTwoExif, maxPixels: 1 << 20).orientation == .right)
        #expect(try ImageDecoder.decodeBitmap(withTwoExif, maxPixels: 1 << 20).bitmap.width == 24)
    }

    @Test func exifParserHandlesBothByteOrdersAndGarbage() {
        // Big-endian TIFF, IFD0 at 8 with one entry: 0x0112 SHORT 1 value 8.
        let motorola: [UInt8] = [0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 8, 0, 0, 0, 0]
        let intel: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 5, 0, 0, 0, 0, 0]
        #expect(motorola.withUnsafeBytes { thumbd_exif_orientation($0.baseAddress, $0.count) } == 8)
        #expect(intel.withUnsafeBytes { thumbd_exif_orientation($0.baseAddress, $0.count) } == 5)
        // IFD offset pointing past the end, a truncated entry, an out-of-range value: all mean "upright".
        var broken = motorola
        broken[7] = 200
        #expect(broken.withUnsafeBytes { thumbd_exif_orientation($0.baseAddress, $0.count) } == 1)
        #expect(Array(motorola.prefix(15)).withUnsafeBytes { thumbd_exif_orientation($0.baseAddress, $0.count) } == 1)
        var nine = intel
        nine[18] = 9
        #expect(nine.withUnsafeBytes { thumbd_exif_orientation($0.baseAddress, $0.count) } == 1)
    }
}
