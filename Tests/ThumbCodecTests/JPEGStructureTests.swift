import Testing
@testable import ThumbCodec
import ThumbImaging

/// The JPEG segment walk (JPEGStructure, SourcesAndLimits.md § Structure
/// limits): files made here from `testorig.jpg` with segments inserted.
@Suite struct JPEGStructureTests {
    let testorig = Fixtures.bytes("testorig.jpg")

    /// A marker segment with `payload`.
    static func segment(_ marker: UInt8, _ payload: [UInt8] = []) -> [UInt8] {
        let length = payload.count + 2
        return [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    /// `count` copies of `segment` right after SOI.
    static func padded(_ jpeg: [UInt8], with segment: [UInt8], count: Int) -> [UInt8] {
        var out = Array(jpeg[..<2])
        out.reserveCapacity(jpeg.count + segment.count * count)
        for _ in 0..<count { out += segment }
        return out + jpeg[2...]
    }

    // MARK: Issue 19 item 5: libjpeg's quadratic saved-marker list

    /// 100 000 empty APP1 segments (400 KB): libjpeg-turbo saves APP1 in the
    /// probe and walks its whole marker list for each, ~10 s in one call.
    @Test func aHundredThousandEmptyAPP1SegmentsAreRefusedBeforeLibjpeg() {
        let jpeg = Self.padded(testorig, with: Self.segment(0xE1), count: 100_000)
        #expect(throws: CodecError.tooComplex("JPEG has more than 4096 APP1 segments")) {
            try ImageDecoder.probe(jpeg, maxPixels: 1 << 20)
        }
    }

    /// The same with APP2, which the decode saves (ICC profiles).
    @Test func aHundredThousandEmptyAPP2SegmentsAreRefusedBeforeLibjpeg() {
        let jpeg = Self.padded(testorig, with: Self.segment(0xE2), count: 100_000)
        #expect(throws: CodecError.tooComplex("JPEG has more than 4096 APP2 segments")) {
            try ImageDecoder.decodeBitmap(jpeg, maxPixels: 1 << 20)
        }
    }

    /// At the limit, of each kind, the file still decodes.
    @Test func theSavedSegmentLimitIsPerKindAndInclusive() throws {
        let limit = JPEGStructure.maxSavedSegmentsPerKind
        #expect(limit == 4096)
        var jpeg = Self.padded(testorig, with: Self.segment(0xE1), count: limit)
        jpeg = Self.padded(jpeg, with: Self.segment(0xE2, Array("XTHUMBD\0".utf8)), count: limit)
        #expect(try ImageDecoder.decodeBitmap(jpeg, maxPixels: 1 << 20).bitmap.width == 227)
        let over = Self.padded(jpeg, with: Self.segment(0xE2), count: 1)
        #expect(throws: CodecError.tooComplex("JPEG has more than 4096 APP2 segments")) {
            try StructureWalk.check(over, format: .jpeg)
        }
    }

    /// Tests/Benchmarks/attacks.sh "app2-padded": a small JPEG padded with
    /// 48 MB of 64 KB APP2 segments (733 of them) is odd but legitimate.
    @Test func aJPEGPaddedWith48MBOfAPP2SegmentsStillDecodes() throws {
        let payload = Array("XTHUMBD\0".utf8) + [UInt8](repeating: 0, count: 65533 - 8)
        let segment = Self.segment(0xE2, payload)
        let jpeg = Self.padded(testorig, with: segment, count: 48_000_000 / segment.count + 1)
        #expect(try ImageDecoder.decodeBitmap(jpeg, maxPixels: 1 << 20).bitmap.width == 227)
    }

    /// An ICC profile split into the most APP2 parts its sequence numbers
    /// allow (255) is joined and applied as before.
    @Test func anICCProfileIn255PartsStillApplies() throws {
        let profile = ICC.padded(ICC.profile("display-p3.icc"), to: 255 * 100)
        let parts = ICC.segments(profile, chunk: 100)
        #expect(parts.count == 255)
        let split = try ICC.decode(ICC.tagging(testorig, with: parts))
        let whole = try ICC.decode(ICC.tagging(testorig, profile: profile))
        let untagged = try ICC.decode(testorig)
        #expect(split == whole && split != untagged)
    }

    /// libjpeg reads the segments between a progressive file's scans inside
    /// jpeg_start_decompress and saves APPn there too: they count.
    @Test func savedSegmentsBetweenScansCount() throws {
        let base = Fixtures.bytes("bombs/black-2scans.jpg")
        let sos = try #require((0..<base.count - 1).last { base[$0] == 0xFF && base[$0 + 1] == 0xDA })
        let between = [UInt8]((0..<5000).flatMap { _ -> [UInt8] in Self.segment(0xE2) })
        let jpeg = Array(base[..<sos]) + between + base[sos...]
        #expect(throws: CodecError.tooComplex("JPEG has more than 4096 APP2 segments")) {
            try StructureWalk.check(jpeg, format: .jpeg)
        }
    }

    /// Segments of any kind but SOS: 65 536 pass, one more is refused.
    @Test func allSegmentsAreCounted() throws {
        let limit = JPEGStructure.maxSegments
        let jpeg = Self.padded(testorig, with: Self.segment(0xFE), count: limit - 20)
        #expect(try ImageDecoder.probe(jpeg, maxPixels: 1 << 20).width == 227)
        let over = Self.padded(testorig, with: Self.segment(0xFE), count: limit + 1)
        #expect(throws: CodecError.tooComplex("JPEG has more than 65536 marker segments")) {
            try StructureWalk.check(over, format: .jpeg)
        }
    }

    /// Entropy-coded data is searched for markers as libjpeg does: stuffed
    /// `FF 00`, restart markers and fill bytes are not segments.
    @Test func entropyCodedDataIsNotCounted() throws {
        let scan = [UInt8]((0..<70_000).flatMap { i -> [UInt8] in [0x12, 0xFF, 0x00, 0xFF, 0xD0 + UInt8(i % 8), 0xFF, 0xFF, 0x00] })
        let jpeg = [0xFF, 0xD8] + Self.segment(0xDA, [1, 1, 0, 0, 63, 0]) + scan + [0xFF, 0xD9]
            + Self.padded([0xFF, 0xD8], with: Self.segment(0xE2), count: 5000)   // after EOI: never read
        try StructureWalk.check(jpeg, format: .jpeg)
    }

    // MARK: Malformed segments

    @Test func aSegmentPastTheEndOfTheHeaderIsCorrupt() {
        let sof: [UInt8] = [0xFF, 0xC0, 0x00, 0x11, 8, 0, 1]   // claims 17 bytes, has 3
        #expect(throws: CodecError.corrupt("JPEG marker segment extends past the end of the data (truncated)")) {
            try StructureWalk.check([0xFF, 0xD8] + sof, format: .jpeg)
        }
        #expect(throws: CodecError.corrupt("JPEG data ends inside a marker (truncated)")) {
            try StructureWalk.check([0xFF, 0xD8, 0xFF, 0xE1, 0x00], format: .jpeg)
        }
        // Cut inside testorig's header, anywhere after SOI: refused or (between
        // markers) left to libjpeg; never a trap.
        for cut in 3..<600 {
            do { try StructureWalk.check(Array(testorig[..<cut]), format: .jpeg) } catch {
                #expect(error == .corrupt("JPEG marker segment extends past the end of the data (truncated)")
                        || error == .corrupt("JPEG data ends inside a marker (truncated)"), "cut at \(cut)")
            }
        }
    }

    @Test func lengthsBelowTwoAreCorrupt() {
        for length: UInt8 in [0, 1] {
            let jpeg = Array(testorig[..<2]) + [0xFF, 0xE1, 0x00, length] + testorig[2...]
            #expect(throws: CodecError.corrupt("JPEG marker segment with length \(length)")) {
                try ImageDecoder.probe(jpeg, maxPixels: 1 << 20)
            }
        }
    }

    /// After the first SOS a broken segment is libjpeg's to judge: a baseline
    /// image whose data is complete decodes even if junk follows its scan.
    @Test func brokenSegmentsAfterTheFirstScanAreLeftToLibjpeg() throws {
        let eoi = testorig.count - 2
        for tail: [UInt8] in [[0xFF, 0xFE, 0x00], [0xFF, 0xFE, 0x00, 0x00], [0xFF, 0xFE, 0x40, 0x00, 1, 2]] {
            let jpeg = Array(testorig[..<eoi]) + tail
            try StructureWalk.check(jpeg, format: .jpeg)
            #expect(try ImageDecoder.decodeBitmap(jpeg, maxPixels: 1 << 20).bitmap.height == 149)
        }
    }

    /// Bytes that are not a JPEG at all pass through: the walk runs after
    /// sniffing, and libjpeg refuses them itself.
    @Test func nonJPEGBytesAreLeftToLibjpeg() throws {
        for bytes: [UInt8] in [[], [0xFF], [0x00, 0xD8, 0xFF], [0xFF, 0xD8], [0xFF, 0xD8, 0xFF], [0xFF, 0xD8, 0x00, 0x00]] {
            try StructureWalk.check(bytes, format: .jpeg)
        }
    }
}
