import CThumbCodec
import Testing
import ThumbCodec
import ThumbImaging

/// A progressive JPEG decoded at a reduced DCT scale skips the scans whose
/// coefficients the scaled IDCT never reads (jpeg_scans.c): at 1/8 the luma's
/// AC scans, and every AC scan of a 4:4:4, 4:2:2 or gray file. Each test
/// compares `thumbd_jpeg_open` with `thumbd_jpeg_open_every_scan`, the decode
/// as it was before: same pixels, byte for byte, and the same answer for
/// truncated and hostile files. Fixtures: `Fixtures/progressive/` (SOURCES.md).
@Suite struct ProgressiveFastPathTests {
    /// Each fixture with the scans a 1/8 decode hands libjpeg, of how many.
    static let fixtures: [(name: String, decoded: Int, inFile: Int)] = [
        ("rocket-444-jpegtran.jpg", 2, 10),      // jpegtran's script: the two DC scans
        ("chelsea-420.jpg", 6, 10),              // + the chroma's four AC scans (2×2 IDCT)
        ("chelsea-422.jpg", 2, 10),              // 4:2:2 chroma is 1×1 at 1/8
        ("chelsea-420-restart.jpg", 6, 10),      // restart markers in the skipped scans
        ("chelsea-420-split.jpg", 10, 14),       // chroma bands split, DC in three steps
        ("chelsea-444-spectral.jpg", 1, 6),      // spectral selection only, a restart every row
        ("chelsea-420-separate-dc.jpg", 5, 7),   // one DC scan per component
        ("camera-gray.jpg", 2, 6),
        ("cmyk.jpg", 2, 18),
    ]

    @Test(arguments: fixtures)
    func sameBytesAsEveryScanAtEveryScale(_ fixture: (name: String, decoded: Int, inFile: Int)) throws {
        let data = Fixtures.bytes("progressive/" + fixture.name)
        for scale in 1...8 {
            let fast = JPEGDecode(data, scale: scale), full = JPEGDecode(data, scale: scale, everyScan: true)
            #expect(fast.status == THUMBD_OK && full.status == THUMBD_OK, "\(fixture.name) at \(scale)/8")
            #expect(fast.width == full.width && fast.height == full.height && fast.pixels == full.pixels,
                    "\(fixture.name) at \(scale)/8")
            #expect(full.scansDecoded == fixture.inFile)
            // Only 1/8 skips scans here: from 2/8 on, the IDCTs read a coefficient in
            // every scan's band (jidctred.c's 2×2 and 4×4 read rows and columns 3, 5, 7 too).
            let expected = scale == 1 ? fixture.decoded : fixture.inFile
            #expect(fast.scansDecoded == expected && fast.scansInFile == fixture.inFile, "\(fixture.name) at \(scale)/8")
        }
    }

    /// Through `ImageDecoder`, as a small render asks: scale 1/8, every scan's pixels.
    @Test func imageDecoderAtOneEighthGivesEveryScansPixels() throws {
        let data = Fixtures.bytes("progressive/chelsea-420.jpg")
        let header = try ImageDecoder.probe(data, maxPixels: 1 << 20)
        var sink = BitmapSink()
        let info = try ImageDecoder.decode(data, header: header, minimumDisplayedSize: (40, 30), into: &sink)
        let bitmap = try #require(sink.bitmap())
        let full = JPEGDecode(data, scale: 1, everyScan: true)
        #expect(info.scaleNumerator == 1 && bitmap.width == 57 && bitmap.height == 38)
        #expect(bitmap.pixels == full.pixels)
    }

    /// A file cut anywhere gets the full decode's answer: inside a skipped
    /// scan, inside a kept one, between scans, inside a table between scans;
    /// without its EOI it still decodes.
    @Test func truncatedFilesAnswerAsTheFullDecode() throws {
        let data = Fixtures.bytes("progressive/chelsea-420.jpg")
        let layout = JPEGLayout(data)
        let scans = layout.scans
        try #require(scans.count == 10 && scans[1].components == [1] && scans[1].ss == 1)   // the luma 1…5 scan: skipped
        let dht = try #require(layout.segments.last { $0.marker == 0xC4 && $0.start > scans[1].start })
        let cuts: [(String, Int, Bool)] = [
            ("inside a skipped scan", (scans[1].dataStart + scans[1].end) / 2, false),
            ("inside the first DC scan", (scans[0].dataStart + scans[0].end) / 2, false),
            ("inside a kept chroma scan", (scans[2].dataStart + scans[2].end) / 2, false),
            ("between scans", scans[5].start, false),
            ("before the last scan", scans[9].start, false),
            ("inside a DHT between scans", dht.start + 10, false),
            ("inside the last (skipped) scan", scans[9].end - 40, false),
            ("without EOI", data.count - 2, true),
            ("inside EOI", data.count - 1, true),
        ]
        for (what, cut, decodes) in cuts {
            let prefix = Array(data.prefix(cut))
            let fast = JPEGDecode(prefix, scale: 1), full = JPEGDecode(prefix, scale: 1, everyScan: true)
            #expect(fast == full, "cut \(what)")
            #expect((fast.status == THUMBD_OK) == decodes, "cut \(what): \(fast.message)")
            if !decodes { #expect(fast.status == THUMBD_CORRUPT, "cut \(what)") }
        }
        // Through ImageDecoder: 422 corrupt_image, as without the fast path.
        #expect(throws: CodecError.self) {
            try ImageDecoder.decodeBitmap(Array(data.prefix(scans[1].dataStart + 100)), maxPixels: 1 << 20,
                                          minimumDisplayedSize: (40, 30))
        }
    }

    /// 100 scans decode (99 of them skipped at 1/8), the 101st is corrupt
    /// with the full decode's message, after the same 100 scans.
    @Test func scanBombsAreRefusedAsBefore() throws {
        let hundred = ScanBomb.jpeg(scans: 100)
        let fast = JPEGDecode(hundred, scale: 1)
        #expect(fast.status == THUMBD_OK && fast.scansDecoded == 1 && fast.scansInFile == 100)
        #expect(fast == JPEGDecode(hundred, scale: 1, everyScan: true))
        for scans in [101, 1000] {
            let bomb = ScanBomb.jpeg(scans: scans)
            let fast = JPEGDecode(bomb, scale: 1)
            #expect(fast.status == THUMBD_CORRUPT && fast.message == "progressive JPEG has more than 100 scans")
            #expect(fast == JPEGDecode(bomb, scale: 1, everyScan: true))
            #expect(throws: CodecError.corrupt("progressive JPEG has more than 100 scans")) {
                try ImageDecoder.decodeBitmap(bomb, maxPixels: 1 << 20, minimumDisplayedSize: (8, 8))
            }
        }
    }

    /// Hostile changes to a skipped scan, its header or what surrounds it:
    /// the same answer (status, message, pixels) as decoding every scan.
    @Test(arguments: HostileScan.allCases)
    func hostileScansAnswerAsTheFullDecode(_ change: HostileScan) throws {
        let data = change.apply(to: Fixtures.bytes("progressive/chelsea-420.jpg"))
        let fast = JPEGDecode(data, scale: 1), full = JPEGDecode(data, scale: 1, everyScan: true)
        #expect(fast == full)
        #expect((fast.status == THUMBD_OK) == (change.scansDecoded != nil), "\(change): \(fast.message)")
        if let scans = change.scansDecoded { #expect(fast.scansDecoded == scans && fast.scansInFile == 10) }
        else { #expect(fast.status == THUMBD_CORRUPT) }
    }
}

/// The changes `hostileScansAnswerAsTheFullDecode` makes to `chelsea-420.jpg`,
/// all to or around its second scan (luma 1…5, skipped at 1/8) unless said.
enum HostileScan: CaseIterable {
    case lengthTooShort, lengthPastTheEnd, componentNotInFrame, duplicateComponent, startAfterEnd, endPast63,
         dcBandWithAC, noComponents, fiveComponents, refinementWithWrongAl, alOver13, undefinedACTable,
         fillBytesBeforeEveryMarker, restartMarkerInData, dataAfterEOI, missingEOI, dhtWithBadLength,
         unknownMarkerBetweenScans, secondFrameHeader, dnlBetweenScans, componentFirstSeenInSkippedScan

    /// Scans a 1/8 decode of the changed file hands libjpeg; nil when it is corrupt.
    var scansDecoded: Int? {
        switch self {
        case .fillBytesBeforeEveryMarker, .dataAfterEOI: 6   // the fast path as for the intact file
        case .missingEOI: 10   // the last scan is libjpeg's to judge, and with it all it refines
        case .dnlBetweenScans: 10   // libjpeg skips a DNL; the plan does not follow one
        case .componentFirstSeenInSkippedScan: 7   // luma's AC 1…5 scan, where its table is latched
        default: nil
        }
    }

    func apply(to original: [UInt8]) -> [UInt8] {
        var data = original
        let layout = JPEGLayout(original)
        let scan = layout.scans[1]
        let header = scan.start + 4   // Ns; then id/tables pairs, Ss, Se, Ah/Al
        switch self {
        case .lengthTooShort: data[scan.start + 3] -= 1
        case .lengthPastTheEnd: data[scan.start + 2] = 0xFF
        case .componentNotInFrame: data[header + 1] = 9
        case .duplicateComponent:   // Ns 2 naming component 1 twice (the length grows with it)
            data[scan.start + 3] += 2
            data[header] = 2
            data.insert(contentsOf: [data[header + 1], data[header + 2]], at: header + 3)
        case .startAfterEnd: data[header + 3] = 6   // Ss 6 > Se 5
        case .endPast63: data[header + 4] = 64
        case .dcBandWithAC: data[header + 3] = 0   // Ss 0, Se 5
        case .noComponents: data[header] = 0
        case .fiveComponents: data[header] = 5
        case .refinementWithWrongAl: data[header + 5] = 0x31   // Ah 3, Al 1
        case .alOver13: data[header + 5] = 0x0E
        case .undefinedACTable: data[header + 2] = 0x03   // AC table 3: never defined
        case .fillBytesBeforeEveryMarker:
            for s in layout.scans.dropFirst().reversed() {
                data.insert(contentsOf: [UInt8](repeating: 0xFF, count: 3), at: s.start)
            }
        case .restartMarkerInData:   // no DRI: libjpeg's Huffman decoder stops there
            data.insert(contentsOf: [0xFF, 0xD0], at: scan.dataStart + (scan.end - scan.dataStart) / 2)
        case .dataAfterEOI: data += [0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x01, 0x3F, 0x00, 0x12, 0x34]
        case .missingEOI: data.removeLast(2)
        case .dhtWithBadLength:
            let dht = layout.segments.first { $0.marker == 0xC4 && $0.start > layout.scans[0].start }!
            data[dht.start + 3] &+= 3
        case .unknownMarkerBetweenScans: data.insert(contentsOf: [0xFF, 0x02, 0x00, 0x04, 0x00, 0x00], at: scan.start)
        case .secondFrameHeader:
            let sof = layout.segments.first { $0.marker == 0xC2 }!
            data.insert(contentsOf: original[sof.start..<sof.end], at: scan.start)
        case .dnlBetweenScans: data.insert(contentsOf: [0xFF, 0xDC, 0x00, 0x04, 0x01, 0x2C], at: scan.start)
        case .componentFirstSeenInSkippedScan:
            // The first DC scan without luma, so luma is first seen in its AC 1…5
            // scan (libjpeg warns, and decodes), and a DQT redefining luma's table
            // after that scan: libjpeg latched the table in force at the AC scan.
            // Skipped, luma would be first seen in the DC refinement, after the DQT.
            let dc = layout.scans[0]
            data.insert(contentsOf: [0xFF, 0xDB, 0x00, 0x43, 0x00] + [UInt8](repeating: 2, count: 64),
                        at: layout.scans[2].start)
            data[dc.start + 3] -= 2
            data[dc.start + 4] = 2
            data.removeSubrange(dc.start + 5..<dc.start + 7)
        }
        return data
    }
}

/// One decode through the C shim at scale/8, every row read. Two decodes are
/// equal when they give the same answer: status, message, size and pixels
/// (not how many scans it took).
struct JPEGDecode: Equatable, CustomStringConvertible {
    var status: Int32 = 0
    var message = ""
    var width = 0, height = 0
    var pixels: [UInt8] = []
    var scansDecoded = 0, scansInFile = 0

    static func == (a: JPEGDecode, b: JPEGDecode) -> Bool {
        (a.status, a.message, a.width, a.height, a.pixels) == (b.status, b.message, b.width, b.height, b.pixels)
    }

    var description: String {
        "status \(status) \"\(message)\" \(width)×\(height) pixels \(Fixtures.sha256Hex(pixels).prefix(12)), "
            + "\(scansDecoded) of \(scansInFile) scans"
    }

    init(_ data: [UInt8], scale: Int, everyScan: Bool = false) {
        var text = [CChar](repeating: 0, count: 256)
        var w: UInt32 = 0, h: UInt32 = 0
        let decoder = data.withUnsafeBytes { bytes in
            everyScan
                ? thumbd_jpeg_open_every_scan(bytes.baseAddress, bytes.count, Int32(scale), thumbd_deadline(),
                                              &w, &h, &status, &text, text.count)
                : thumbd_jpeg_open(bytes.baseAddress, bytes.count, Int32(scale), thumbd_deadline(),
                                   &w, &h, &status, &text, text.count)
        }
        defer { message = text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } }
        guard let decoder else { return }
        defer { thumbd_jpeg_close(decoder) }
        var decoded: Int32 = 0, inFile: Int32 = 0
        thumbd_jpeg_scan_counts(decoder, &decoded, &inFile)
        (scansDecoded, scansInFile, width, height) = (Int(decoded), Int(inFile), Int(w), Int(h))
        pixels = [UInt8](repeating: 0, count: width * height * 4)
        var done = 0
        while done < height, status == THUMBD_OK {
            var read: UInt32 = 0
            status = pixels.withUnsafeMutableBytes { rows in
                thumbd_jpeg_read(decoder, rows.baseAddress! + done * width * 4, UInt32(height - done), &read, &text, text.count)
            }
            if read == 0 { break }
            done += Int(read)
        }
    }
}

/// The marker segments and scans of a JPEG by offset: the test's own walk,
/// for well-formed fixtures only (not the shim's).
struct JPEGLayout {
    struct Segment { let marker: UInt8, start: Int, end: Int }
    struct Scan { let start: Int, dataStart: Int, end: Int, components: [UInt8], ss: UInt8 }
    var segments: [Segment] = []
    var scans: [Scan] = []

    init(_ b: [UInt8]) {
        var i = 2
        var scanStart: (start: Int, dataStart: Int, components: [UInt8], ss: UInt8)?
        while i + 1 < b.count {
            guard b[i] == 0xFF, b[i + 1] != 0x00, b[i + 1] != 0xFF, !(0xD0...0xD7).contains(b[i + 1]) else { i += 1; continue }
            if let s = scanStart {
                scans.append(Scan(start: s.start, dataStart: s.dataStart, end: i, components: s.components, ss: s.ss))
                scanStart = nil
            }
            let marker = b[i + 1]
            if marker == 0xD9 { break }
            let end = i + 2 + Int(b[i + 2]) << 8 + Int(b[i + 3])
            segments.append(Segment(marker: marker, start: i, end: end))
            if marker == 0xDA {
                let n = Int(b[i + 4])
                scanStart = (i, end, (0..<n).map { b[i + 5 + 2 * $0] }, b[i + 5 + 2 * n])
            }
            i = end
        }
    }
}
