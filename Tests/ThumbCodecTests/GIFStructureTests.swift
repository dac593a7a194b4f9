import Testing
@testable import ThumbCodec
import ThumbImaging

/// The GIF block walk (GIFStructure, SourcesAndLimits.md § Structure
/// limits): GIFs made here, 2×2 with a two-colour global table.
@Suite struct GIFStructureTests {
    static let header: [UInt8] = Array("GIF89a".utf8) + [2, 0, 2, 0, 0x80, 0, 0] + [0, 0, 0, 255, 255, 255]

    /// A 2×2 frame of index 0 (optionally with a local two-colour table):
    /// LZW minimum code size 8 and one data sub-block as Pillow writes them,
    /// then the terminator.
    static func frame(localTable: Bool = false) -> [UInt8] {
        [0x2C, 0, 0, 0, 0, 2, 0, 2, 0, localTable ? 0x80 : 0] + (localTable ? [0, 0, 0, 255, 0, 0] : [])
            + [8, 6, 0x00, 0x01, 0x08, 0x04, 0x10, 0x10, 0]
    }

    static let comment: [UInt8] = [0x21, 0xFE, 0]
    static let graphicControl: [UInt8] = [0x21, 0xF9, 4, 0, 10, 0, 0, 0]

    static func gif(_ blocks: [[UInt8]], trailer: Bool = true) -> [UInt8] {
        var out = header
        for block in blocks { out += block }
        return trailer ? out + [0x3B] : out
    }

    @Test func theBuiltGIFDecodes() throws {
        let (bitmap, header) = try ImageDecoder.decodeBitmap(Self.gif([Self.graphicControl, Self.frame()]), maxPixels: 100)
        #expect(header.width == 2 && bitmap.pixels == [0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255])
    }

    /// Frames, with or without a local table: up to the limit inclusive.
    /// giflib reads only the first today, so a million frames probed fine;
    /// no real animation has more than a few thousand.
    @Test func framesAreCounted() throws {
        let limit = GIFStructure.maxFrames
        #expect(limit == 100_000)
        let frames = (0..<limit).map { Self.frame(localTable: $0 % 2 == 0) }
        try StructureWalk.check(Self.gif(frames), format: .gif)
        let over = Self.gif(frames + [Self.frame()])
        #expect(throws: CodecError.tooComplex("GIF has more than 100000 frames")) {
            try ImageDecoder.probe(over, maxPixels: 100)
        }
    }

    @Test func extensionsAreCounted() throws {
        let limit = GIFStructure.maxExtensions
        #expect(limit == 200_000)
        let some = Array(repeating: Self.comment, count: limit - 1) + [Self.graphicControl, Self.frame()]
        #expect(try ImageDecoder.probe(Self.gif(some), maxPixels: 100).width == 2)
        let over = Self.gif(Array(repeating: Self.comment, count: limit + 1) + [Self.frame()])
        #expect(throws: CodecError.tooComplex("GIF has more than 200000 extension blocks")) {
            try ImageDecoder.probe(over, maxPixels: 100)
        }
    }

    /// Extension data spread over many sub-blocks is one extension.
    @Test func subBlocksAreNotCounted() throws {
        let application: [UInt8] = [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8)
            + [UInt8]((0..<300_000).flatMap { _ -> [UInt8] in [1, 0] }) + [0]
        try StructureWalk.check(Self.gif([application, Self.frame()]), format: .gif)
    }

    // MARK: Malformed blocks

    /// Truncation anywhere, a missing trailer or an unknown block byte is
    /// left to giflib (which reads only the first frame): never a refusal,
    /// never a trap.
    @Test func malformedBlocksAreLeftToGiflib() throws {
        let full = Self.gif([Self.graphicControl, Self.frame(localTable: true), Self.comment, Self.frame()])
        for cut in 0..<full.count {
            try StructureWalk.check(Array(full[..<cut]), format: .gif)
        }
        try StructureWalk.check(Self.gif([Self.frame(), [0x00, 0x2C, 0xFF]], trailer: false), format: .gif)
        // Junk after the first frame: giflib never reads it, so the file decodes.
        let junk = Self.gif([Self.frame(), [0x99] + [UInt8](repeating: 0x2C, count: 64)], trailer: false)
        #expect(try ImageDecoder.decodeBitmap(junk, maxPixels: 100).bitmap.width == 2)
        // A global table announced but missing; zero-size sub-blocks.
        try StructureWalk.check(Array("GIF89a".utf8) + [2, 0, 2, 0, 0x87, 0, 0, 1, 2, 3], format: .gif)
        try StructureWalk.check(Self.gif([[0x21, 0xFE, 0, 0, 0], Self.frame()]), format: .gif)
    }

    @Test func nonGIFBytesAreLeftToGiflib() throws {
        for bytes: [UInt8] in [[], Array("GIF8".utf8), Array("GIF88a".utf8) + [UInt8](repeating: 0x2C, count: 100),
                               Array("GIF87a".utf8)] {
            try StructureWalk.check(bytes, format: .gif)
        }
    }
}
