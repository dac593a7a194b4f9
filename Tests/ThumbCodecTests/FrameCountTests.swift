import Foundation
import Testing
@testable import ThumbCodec

/// FrameCount (SPEC § 12 `frames`): real GIFs and WebPs against the counts
/// ImageMagick, gifsicle and webpmux give for them (Fixtures/animated/
/// frames.txt), every truncation of each, and hostile block structures
/// built here.
@Suite struct FrameCountTests {
    /// Fixtures/animated/frames.txt: "path count" for every GIF and WebP fixture.
    static let references: [(name: String, frames: Int)] = {
        let text = String(decoding: Fixtures.bytes("animated/frames.txt"), as: UTF8.self)
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 2, let frames = Int(fields[1]) else { return nil }
            return (String(fields[0]), frames)
        }
    }()

    static func count(_ bytes: [UInt8]) -> Int {
        FrameCount.of(bytes, format: ImageFormat.sniff(bytes) ?? .jpeg)
    }

    @Test func everyGIFAndWebPFixtureMatchesTheReferenceTools() throws {
        #expect(Self.references.count >= 29)
        #expect(Set(Self.references.map(\.frames)) == [1, 2, 3, 40])
        for (name, frames) in Self.references {
            let bytes = Fixtures.bytes(name)
            #expect([.gif, .webp].contains(ImageFormat.sniff(bytes)), "\(name)")
            #expect(Self.count(bytes) == frames, "\(name)")
            // The buffer overload is the same walk.
            #expect(bytes.withUnsafeBytes { FrameCount.of($0, format: ImageFormat.sniff(bytes)!) } == frames, "\(name)")
        }
    }

    /// Every other format is 1, an AVIF image sequence of two frames included
    /// (it reports its primary image), and so are bytes of another format.
    @Test func otherFormatsAreOneFrame() throws {
        for name in ["testorig.jpg", "orient/upright.png", "formats/avif-extra/sequence.avif", "formats/photo-alpha.heic"] {
            #expect(Self.count(Fixtures.bytes(name)) == 1, "\(name)")
        }
        let gif = Fixtures.bytes("animated/anim3.gif")
        for format in ImageFormat.allCases where format != .gif {
            #expect(FrameCount.of(gif, format: format) == 1, "\(format)")
        }
        #expect(FrameCount.of(Fixtures.bytes("animated/anim3.webp"), format: .gif) == 1)
        #expect(FrameCount.of([], format: .gif) == 1 && FrameCount.of([], format: .webp) == 1)
    }

    /// Each fixture cut at every length: never a trap, never below 1 or above
    /// the whole file's count, never going down as the cut grows, and each
    /// frame counted exactly when its header becomes whole — a GIF
    /// descriptor's introducer and 9 bytes, an ANMF chunk header and its
    /// 16-byte frame header.
    @Test func truncationsCountTheFramesWhoseHeaderIsWhole() throws {
        var steps = 0
        for (name, frames) in Self.references {
            let bytes = Fixtures.bytes(name)
            let format = try #require(ImageFormat.sniff(bytes))
            var previous = 1
            for cut in 0...bytes.count {
                let counted = bytes.withUnsafeBytes { FrameCount.of(UnsafeRawBufferPointer(rebasing: $0[..<cut]), format: format) }
                #expect((previous...frames).contains(counted), "\(name) cut at \(cut): \(counted)")
                if counted > previous {
                    steps += 1
                    #expect(counted == previous + 1, "\(name) cut at \(cut)")
                    let headerWhole = format == .gif ? bytes[cut - 10] == 0x2C : Array(bytes[cut - 24..<cut - 20]) == Array("ANMF".utf8)
                    #expect(headerWhole, "\(name) cut at \(cut)")
                }
                previous = counted
            }
            #expect(previous == frames, "\(name)")
        }
        #expect(steps == 2 * 39 + 39 + 2 * 2 + 2 * 1)   // anim40 ×2 and its WebP, anim3 ×2, animated.gif/.webp
    }

    // MARK: WebP

    /// A RIFF file's chunks as (fourcc, payload), from a real file: test
    /// code, so that the files below are edits of what libwebp wrote.
    static func chunks(_ file: [UInt8]) -> [(type: String, payload: [UInt8])] {
        var out: [(String, [UInt8])] = []
        var at = 12
        while at + 8 <= file.count {
            let size = file[at + 4..<at + 8].reversed().reduce(0) { $0 << 8 | Int($1) }
            out.append((String(decoding: file[at..<at + 4], as: UTF8.self), Array(file[at + 8..<at + 8 + size])))
            at += 8 + size + size % 2
        }
        return out
    }

    static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    /// A chunk with its size (or `size`, to lie) and its padding.
    static func chunk(_ type: String, _ payload: [UInt8], size: UInt32? = nil) -> [UInt8] {
        Array(type.utf8) + le32(size ?? UInt32(payload.count)) + payload + (payload.count % 2 == 1 ? [0] : [])
    }

    /// A RIFF WebP of these chunks; `riffSize` lies about the size when given.
    static func riff(_ body: [[UInt8]], riffSize: UInt32? = nil) -> [UInt8] {
        let joined = body.flatMap { $0 }
        return Array("RIFF".utf8) + le32(riffSize ?? UInt32(4 + joined.count)) + Array("WEBP".utf8) + joined
    }

    static let anim3 = chunks(Fixtures.bytes("animated/anim3.webp"))
    static func rebuilt(_ chunks: [(type: String, payload: [UInt8])]) -> [[UInt8]] { chunks.map { chunk($0.type, $0.payload) } }

    @Test func webPChunksAreCountedFromTheRealFile() throws {
        #expect(Self.anim3.map(\.type) == ["VP8X", "ANIM", "ANMF", "ANMF", "ANMF"])
        #expect(Self.riff(Self.rebuilt(Self.anim3)) == Fixtures.bytes("animated/anim3.webp"))
        // An animation of one frame (libwebp's tools write a still instead) and of two.
        #expect(Self.count(Self.riff(Self.rebuilt(Array(Self.anim3.prefix(3))))) == 1)
        #expect(Self.count(Self.riff(Self.rebuilt(Array(Self.anim3.prefix(4))))) == 2)
        // The same frames without the VP8X animation flag: a still.
        var flags = Self.anim3
        flags[0].payload[0] &= ~0x02
        #expect(Self.count(Self.riff(Self.rebuilt(flags))) == 1)
        // ANMF before VP8X, or a VP8X shorter than its 10 bytes: not an animation.
        #expect(Self.count(Self.riff(Self.rebuilt([Self.anim3[2]] + Self.anim3))) == 1)
        #expect(Self.count(Self.riff([Self.chunk("VP8X", Array(Self.anim3[0].payload.prefix(9)))] + Self.rebuilt(Array(Self.anim3.dropFirst())))) == 1)
        // Metadata chunks between frames (an odd size, padded) are stepped over.
        var metadata = Self.rebuilt(Self.anim3)
        metadata.insert(Self.chunk("EXIF", [1, 2, 3]), at: 3)
        metadata.append(Self.chunk("XMP ", [UInt8](repeating: 0x41, count: 7)))
        #expect(Self.count(Self.riff(metadata)) == 3)
    }

    /// RIFF and chunk sizes that lie: the RIFF size bounds the walk like
    /// libwebpdemux's `riff_end_`, one past the data is a truncation, and a
    /// 0xFFFFFFFF size neither overflows nor loops.
    @Test func webPSizesThatLie() throws {
        let body = Self.rebuilt(Self.anim3)
        let throughFirstFrame = UInt32(4 + body[0..<3].joined().count)
        #expect(Self.count(Self.riff(body, riffSize: throughFirstFrame)) == 1)
        #expect(Self.count(Self.riff(body, riffSize: throughFirstFrame + 24)) == 2)   // the next ANMF's headers
        #expect(Self.count(Self.riff(body, riffSize: throughFirstFrame + 23)) == 1)
        for size: UInt32 in [0, 3, 4, 0xFFFF_FFF0, 0xFFFF_FFFF] {
            #expect(Self.count(Self.riff(body, riffSize: size)) == (size >= 0xFFFF_FFF0 ? 3 : 1), "\(size)")
        }
        // A chunk claiming 4 GiB: a truncated frame is a frame when its header is whole; nothing after it is read.
        for (index, expected) in [(1, 1), (3, 2), (4, 3)] {
            var lying = body
            lying[index].replaceSubrange(4..<8, with: Self.le32(0xFFFF_FFFF))
            #expect(Self.count(Self.riff(lying, riffSize: 0xFFFF_FFFF)) == expected, "\(index)")
        }
        // An ANMF too short for its frame header is no frame.
        let short = Self.chunk("ANMF", [UInt8](repeating: 0, count: 15))
        #expect(Self.count(Self.riff(body + [short, short])) == 3)
    }

    /// Zero-size chunks move the walk on by their header: 200 000 of them
    /// (ANMF or not) cost one step each and count nothing.
    @Test func zeroSizeChunksCannotLoop() throws {
        let empty = [UInt8](repeating: 0, count: 0)
        let junk = [[UInt8]](repeating: Self.chunk("JUNK", empty), count: 100_000)
        let anmf = [[UInt8]](repeating: Self.chunk("ANMF", empty), count: 100_000)
        let body = Self.rebuilt(Self.anim3)
        let file = Self.riff([body[0]] + junk + anmf + body[2...])
        let clock = ContinuousClock()
        let elapsed = clock.measure { #expect(Self.count(file) == 3) }
        #expect(elapsed < .seconds(2))
        #expect(Self.count(Self.riff([body[0]] + anmf)) == 1)
    }

    // MARK: GIF

    /// A GIF of `frames` 1×1 frames (LZW minimum code size 2, one data
    /// sub-block), as GIFStructureTests builds them.
    static func gif(frames: Int, before: [UInt8] = [], trailer: [UInt8] = [0x3B]) -> [UInt8] {
        let header = Array("GIF89a".utf8) + [1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 255, 255, 255]
        let frame: [UInt8] = [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x4C, 0x01, 0]
        return header + before + [UInt8]((0..<frames).flatMap { _ in frame }) + trailer
    }

    /// GIFStructure's limit: 100 000 frames count, and more give the cap
    /// (the walk stops there) while StructureWalk still refuses the file.
    @Test func manyGIFDescriptorsGiveTheCap() throws {
        #expect(Self.count(Self.gif(frames: 100_000)) == 100_000)
        let over = Self.gif(frames: 100_050)
        #expect(Self.count(over) == GIFStructure.maxFrames)
        #expect(throws: CodecError.tooComplex("GIF has more than 100000 frames")) { try StructureWalk.check(over, format: .gif) }
        // Past the extension limit the walk stops: the frames before it count.
        let comments = [UInt8]((0...GIFStructure.maxExtensions).flatMap { _ -> [UInt8] in [0x21, 0xFE, 0] })
        #expect(Self.count(Self.gif(frames: 3, trailer: comments + Self.gif(frames: 5).dropFirst(19))) == 3)
    }

    /// The walk ends at the trailer or the first byte that is not a block,
    /// and a descriptor counts only whole.
    @Test func gifDescriptorsCountOnlyWhole() throws {
        let two = Self.gif(frames: 2, trailer: [])
        #expect(Self.count(two) == 2)
        #expect(Self.count(two + [0x2C] + [UInt8](repeating: 0, count: 9)) == 3)
        #expect(Self.count(two + [0x2C] + [UInt8](repeating: 0, count: 8)) == 2)
        #expect(Self.count(Self.gif(frames: 2, trailer: [0x3B]) + Self.gif(frames: 4).dropFirst(19)) == 2)
        #expect(Self.count(Self.gif(frames: 2, trailer: [0x99]) + Self.gif(frames: 4).dropFirst(19)) == 2)
        // Extensions between frames, and a 16-colour local table, are stepped over.
        let graphicControl: [UInt8] = [0x21, 0xF9, 4, 0, 10, 0, 0, 0]
        let local: [UInt8] = [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0x83] + [UInt8](repeating: 0x2C, count: 48) + [2, 2, 0x4C, 0x01, 0]
        #expect(Self.count(Self.gif(frames: 1, before: graphicControl + local + graphicControl + local)) == 3)
    }

    // MARK: Fuzz corpus

    /// The fuzzers' kept inputs (Tests/Fuzz/corpus: mutated GIFs and WebPs
    /// among them): no trap, and no count above the bytes that could start a
    /// frame header (a 0x2C byte, an "ANMF").
    @Test func fuzzCorpusInputsAreBounded() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Fuzz/corpus").standardizedFileURL
        var seen = 0
        for folder in ["structure", "codec"] {
            let directory = root.appendingPathComponent(folder)
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
                guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else { continue }
                let bytes = [UInt8](data)
                guard let format = ImageFormat.sniff(bytes), [.gif, .webp].contains(format) else { continue }
                seen += 1
                let starts = format == .gif ? bytes.filter { $0 == 0x2C }.count
                    : bytes.indices.dropLast(3).filter { Array(bytes[$0..<$0 + 4]) == Array("ANMF".utf8) }.count
                let counted = FrameCount.of(bytes, format: format)
                #expect((1...max(1, starts)).contains(counted), "\(folder)/\(name)")
            }
        }
        #expect(seen >= 100)
    }
}
