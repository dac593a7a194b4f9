import Foundation
import Testing
@testable import ThumbCodec

/// The ISOBMFF structure walk (SourcesAndLimits.md § Structure limits) on
/// sound files, malformed boxes and counts past its limits: every refusal is
/// `tooComplex` for a count, `corrupt` for an inconsistency, before any
/// library parses the file.
@Suite struct ISOBMFFStructureTests {
    typealias W = ISOBMFFWriter

    private func walk(_ bytes: [UInt8], _ format: ImageFormat = .avif) throws(CodecError) -> ISOBMFFLayout? {
        try StructureWalk.walk(bytes, format: format)
    }

    private func expectCorrupt(_ bytes: [UInt8], _ why: Comment, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try walk(bytes)
            Issue.record("walk passed: \(why)", sourceLocation: sourceLocation)
        } catch {
            guard case .corrupt = error else {
                Issue.record("\(error), not corrupt: \(why)", sourceLocation: sourceLocation)
                return
            }
        }
    }

    private func expectTooComplex(_ bytes: [UInt8], _ why: Comment, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try walk(bytes)
            Issue.record("walk passed: \(why)", sourceLocation: sourceLocation)
        } catch {
            guard case .tooComplex = error else {
                Issue.record("\(error), not tooComplex: \(why)", sourceLocation: sourceLocation)
                return
            }
        }
    }

    /// Every AVIF and HEIC file in the fixtures — real files from the
    /// formats' test suites, encoder outputs, grids, sequences, idat-stored
    /// grids, alpha — passes, and goes to the library that decodes it. (Not
    /// the fuzzer's find, an AV1 item with no bytes: refused, as it should be.)
    @Test func everyAVIFAndHEICFixturePassesTheWalk() throws {
        let root = Fixtures.root.path
        let names = try FileManager.default.subpathsOfDirectory(atPath: root).filter {
            ($0.hasSuffix(".avif") || $0.hasSuffix(".heic")) && !$0.hasSuffix("fuzz-broken-av1.avif")
        }
        expectCorrupt(Fixtures.bytes("formats/avif-extra/fuzz-broken-av1.avif"), "an AV1 item of no bytes")
        #expect(names.count >= 25)
        for name in names {
            let bytes = Fixtures.bytes(name)
            let format = try #require(ImageFormat.sniff(bytes), "\(name)")
            do {
                let layout = try #require(try walk(bytes, format), "\(name)")
                if name.hasSuffix(".heic") { #expect(layout.usesLibheif, "\(name)") }
                if name.hasSuffix(".avif") { #expect(!layout.usesLibheif, "\(name)") }
            } catch {
                Issue.record("\(name): \(error)")
            }
        }
        #expect(try walk(Fixtures.bytes("formats/photo-grid.avif"))?.tiles == 2)
        #expect(try walk(Fixtures.bytes("formats/photo-alpha.heic"), .heic)?.tiles == 2)   // colour and alpha, 1×1 each
        #expect(try walk(Fixtures.bytes("formats/avif-extra/sequence-no-primary-item.avif"))?.coding == nil)
    }

    /// A file cut anywhere ends inside some box: corrupt, whichever box
    /// (cut right after ftyp it is a file of one box, no meta: the walk has
    /// nothing to refuse, and the libraries refuse it).
    @Test func aTruncatedFileIsCorruptWherever() throws {
        let whole = Fixtures.bytes("formats/photo-grid.avif")
        for cut in 1..<whole.count where cut != 32 { expectCorrupt(Array(whole[..<cut]), "cut at \(cut)") }
        #expect(try walk(Array(whole[..<32])) == ISOBMFFLayout(coding: nil, tiles: 0))
    }

    @Test func boxSizesZeroAndOneAreRead() throws {
        var file = W.avif()
        // Size 0: the last top-level box runs to the end of the file.
        file.extraTop = [[0, 0, 0, 0] + Array("free".utf8) + [1, 2, 3]]
        #expect(try walk(file.bytes())?.coding == .av1)
        // Size 0 inside meta: to meta's end.
        file.extraTop = []
        file.extraMeta = [[0, 0, 0, 0] + Array("free".utf8) + [0, 0, 0, 0]]
        #expect(try walk(file.bytes())?.coding == .av1)
        // Size 1: a 64-bit largesize follows the type.
        file.extraMeta = []
        file.extraTop = [W.be32(1) + Array("free".utf8) + W.be32(0) + W.be32(20) + [1, 2, 3, 4]]
        #expect(try walk(file.bytes())?.coding == .av1)
        file.extraTop = [W.be32(1) + Array("free".utf8) + W.be32(0) + W.be32(15)]
        expectCorrupt(file.bytes(), "a largesize smaller than its own header")
        file.extraTop = [W.be32(1) + Array("free".utf8) + W.be32(1) + W.be32(20) + [1, 2, 3, 4]]
        expectCorrupt(file.bytes(), "a largesize past the end of the file")
        file.extraTop = [W.be32(1) + Array("free".utf8) + W.be32(0)]
        expectCorrupt(file.bytes(), "a largesize cut short")
        file.extraTop = [W.be32(7) + Array("free".utf8)]
        expectCorrupt(file.bytes(), "a size under 8")
        file.extraTop = [[0, 0, 0, 9]]
        expectCorrupt(file.bytes(), "bytes after the last box, too few for a header")
        file.extraTop = [W.be32(24) + Array("uuid".utf8) + [UInt8](repeating: 0, count: 12)]
        expectCorrupt(file.bytes(), "a uuid box too small for its extended type")
    }

    @Test func aBoxPastItsParentsEndIsCorrupt() throws {
        let property = W.full("ispe", W.be32(64) + W.be32(64))
        var file = W.avif()
        // The last property claims 4 bytes more than ipco holds (and iprp, and meta, do hold them).
        let ipco = W.box("ipco", Array(file.properties.dropLast().joined()) + W.be32(UInt32(property.count + 4))
            + Array(property[4...]))
        file.overrides["iprp"] = W.box("iprp", ipco + [0, 0, 0, 0] + W.full("ipma", W.be32(0)))
        expectCorrupt(file.bytes(), "a property past ipco's end")
        // A meta child past meta's end: meta's own size is right, the child's is not.
        file.overrides = [:]
        file.extraMeta = [W.be32(100) + Array("free".utf8)]
        expectCorrupt(file.bytes(), "a meta child past meta's end")
        // A moov tree: a trak past moov's end.
        file.extraMeta = []
        file.extraTop = [W.box("moov", W.be32(64) + Array("trak".utf8) + [UInt8](repeating: 0, count: 8))]
        expectCorrupt(file.bytes(), "a trak past moov's end")
    }

    @Test func boxCountsAndNestingAreLimited() throws {
        var file = W.avif()
        file.extraTop = Array(repeating: W.box("free", []), count: ISOBMFFLimits.boxes)
        expectTooComplex(file.bytes(), "16 384 free boxes")
        file.extraTop = Array(repeating: W.box("free", []), count: 1000)
        #expect(try walk(file.bytes())?.coding == .av1)
        // moov inside moov… deeper than any track tree.
        var nested = W.box("mdhd", [])
        for _ in 0..<ISOBMFFLimits.nesting { nested = W.box("moov", nested) }
        file.extraTop = [nested]
        expectTooComplex(file.bytes(), "boxes nested 17 deep")
    }

    /// Counts in a box's own fields, checked before its entries are read:
    /// a hostile count cannot make the walk (or a library) loop on it.
    @Test func hugeDeclaredCountsAreTooComplex() {
        var file = W.avif()
        file.overrides["iinf"] = W.full("iinf", version: 1, W.be32(.max))
        expectTooComplex(file.bytes(), "iinf entry count 2^32-1")
        file.overrides = ["iloc": W.full("iloc", version: 2, [0x44, 0] + W.be32(100_000))]
        expectTooComplex(file.bytes(), "iloc item count 100 000")
        file.overrides = ["iloc": W.full("iloc", [0x00, 0] + W.be16(1) + W.be16(1) + W.be16(0) + W.be16(0xFFFF))]
        expectTooComplex(file.bytes(), "65 535 extents of no bytes each")
        file.overrides = ["iprp": W.box("iprp", W.box("ipco", []) + W.full("ipma", W.be32(.max)))]
        expectTooComplex(file.bytes(), "ipma entry count 2^32-1")
        file.overrides = ["iprp": W.box("iprp", W.box("ipco", file.properties.joined().map { $0 })
            + W.full("ipma", W.be32(1) + W.be16(1) + [200] + [UInt8](repeating: 1, count: 200)))]
        expectTooComplex(file.bytes(), "200 properties on one item")
        file.overrides = ["iprp": W.box("iprp", W.box("ipco", Array(repeating: W.box("free", []), count: 4097).joined().map { $0 })
            + W.full("ipma", W.be32(0)))]
        expectTooComplex(file.bytes(), "4097 properties")
        file.overrides = [:]
        file.items += [(2, "Exif")]
        file.references = [("cdsc", 2, Array(repeating: 1, count: ISOBMFFLimits.references + 1))]
        expectTooComplex(file.bytes(), "8193 references")
    }

    @Test func referencesToMissingItemsAreCorrupt() {
        var file = W.avif()
        file.primary = 7
        expectCorrupt(file.bytes(), "pitm names no item")
        file = W.avif()
        file.associations.append((9, [1]))
        expectCorrupt(file.bytes(), "ipma for no item")
        file = W.avif()
        file.data.append((9, [1, 2, 3]))
        expectCorrupt(file.bytes(), "iloc for no item")
        file = W.avif()
        file.items.append((2, "Exif"))
        file.references = [("cdsc", 2, [8])]
        expectCorrupt(file.bytes(), "cdsc to no item")
        file.references = [("cdsc", 2, [2])]
        expectCorrupt(file.bytes(), "an item referring to itself")
        file = W.avif()
        file.associations = [(1, [1, 3])]
        expectCorrupt(file.bytes(), "property 3 of 2")
    }

    @Test func duplicatesAreCorrupt() {
        var file = W.avif()
        file.items.append((1, "av01"))
        expectCorrupt(file.bytes(), "two infe for item 1")
        file = W.avif()
        file.associations.append((1, [1]))
        expectCorrupt(file.bytes(), "two ipma entries for item 1")
        file = W.avif()
        file.extraMeta = [W.full("iinf", W.be16(0))]
        expectCorrupt(file.bytes(), "two iinf boxes")
        file = W.avif()
        file.extraTop = [W.full("meta", [])]
        expectCorrupt(file.bytes(), "two meta boxes")
        file = W.heic(rows: 1, columns: 2)
        file.references.append(("dimg", 1, [2, 3]))
        expectCorrupt(file.bytes(), "two dimg boxes from the grid")
    }

    @Test func itemDataMustLieInTheFileAndCodedItemsMustHaveSome() {
        var file = W.avif()
        file.overrides["iloc"] = W.full("iloc", [0x44, 0] + W.be16(1) + W.be16(1) + W.be16(0) + W.be16(1)
            + W.be32(1_000_000) + W.be32(27))
        expectCorrupt(file.bytes(), "an extent past the end of the file")
        file = W.avif()
        file.data = [(1, [])]
        expectCorrupt(file.bytes(), "an AV1 item of no bytes")
        file = W.avif()
        file.data = []
        expectCorrupt(file.bytes(), "an AV1 item without an iloc entry")
    }
}
