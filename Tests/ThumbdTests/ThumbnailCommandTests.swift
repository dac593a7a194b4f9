import Foundation
import Testing
@testable import thumbd
import ThumbRender

/// Runs the real `thumbd` binary, as an operator would.
@Suite struct ThumbnailCommandTests {
    static let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("thumbd").path
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../ThumbCodecTests/Fixtures").standardized.path


    private func temp(_ name: String) -> String {
        NSTemporaryDirectory() + "thumbd-cli-\(UUID().uuidString)-\(name)"
    }

    @Test func thumbnailsAFileAndTheExtensionPicksTheFormat() throws {
        let jpg = temp("out.jpg"), png = temp("out.png"), rgba = temp("out.rgba")
        defer { for f in [jpg, png, rgba] { try? FileManager.default.removeItem(atPath: f) } }
        let input = Self.fixtures + "/rocket.jpg"
        #expect(try ThumbdBinary.run(["thumbnail", input, jpg, "--w", "100"]).status == 0)
        let jpeg = try #require(FileManager.default.contents(atPath: jpg))
        #expect(jpeg.prefix(3) == Data([0xFF, 0xD8, 0xFF]))
        #expect(try ThumbdBinary.run(["thumbnail", input, png, "--w", "64", "--h", "64", "--fit", "cover"]).status == 0)
        let pngData = try #require(FileManager.default.contents(atPath: png))
        #expect(pngData.prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]))
        #expect(Array(pngData[16..<24]) == [0, 0, 0, 64, 0, 0, 0, 64], "64×64 IHDR")
        // 640×427 inside 100 wide: 100×67, raw RGBA.
        #expect(try ThumbdBinary.run(["thumbnail", input, rgba, "--w", "100", "--q", "50"]).status == 0)
        #expect(FileManager.default.contents(atPath: rgba)?.count == 100 * 67 * 4)
        // WebP and AVIF by extension and by --format.
        let webp = temp("out.webp"), avif = temp("out.bin")
        defer { for f in [webp, avif] { try? FileManager.default.removeItem(atPath: f) } }
        #expect(try ThumbdBinary.run(["thumbnail", input, webp, "--w", "80"]).status == 0)
        let webpData = try #require(FileManager.default.contents(atPath: webp))
        #expect(webpData.prefix(4) == Data("RIFF".utf8) && webpData[8..<12] == Data("WEBP".utf8))
        #expect(try ThumbdBinary.run(["thumbnail", input, avif, "--w", "80", "--format", "avif"]).status == 0)
        let avifData = try #require(FileManager.default.contents(atPath: avif))
        #expect(avifData.count > 12 && avifData[4..<12] == Data("ftypavif".utf8))
    }

    /// `--q auto` (SPEC §17): the search's q on stderr, the same q the search
    /// finds in-process; nothing printed for a lossless answer; `AUTO` is a usage error.
    @Test func qAutoPrintsTheQualityItChose() throws {
        let webp = temp("auto.webp"), png = temp("auto.png")
        defer { for f in [webp, png] { try? FileManager.default.removeItem(atPath: f) } }
        let input = Self.fixtures + "/photos/coffee.jpg"
        let run = try ThumbdBinary.run(["thumbnail", input, webp, "--w", "200", "--q", "auto"])
        #expect(run.status == 0, "\(run)")
        let printed = try #require(run.stderr.split(separator: "\n").first { $0.hasPrefix("quality: ") })
        let q = try #require(Int(printed.dropFirst("quality: ".count)))
        let source = [UInt8](try #require(FileManager.default.contents(atPath: input)))
        let header = try ThumbnailPipeline.probe(source: source, limits: PipelineLimits())
        let rendition = try AutoQuality.canonicalRendition(source: source, header: header)
        #expect(try AutoQuality.search(rendition, format: .webp, target: 80, background: nil).q == q)
        let lossless = try ThumbdBinary.run(["thumbnail", input, png, "--w", "50", "--q", "auto"])
        #expect(lossless.status == 0 && !lossless.stderr.contains("quality:"))
        let upper = try ThumbdBinary.run(["thumbnail", input, webp, "--w", "50", "--q", "AUTO"])
        #expect(upper.status == 2 && upper.stderr.contains("--q"))
    }

    @Test func unreadableOrUndecodableInputExits1() throws {
        let out = temp("x.jpg")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let missing = try ThumbdBinary.run(["thumbnail", "/nonexistent/a.jpg", out, "--w", "10"])
        #expect(missing.status == 1 && missing.stderr.contains("cannot read"))
        let corrupt = try ThumbdBinary.run(["thumbnail", Self.fixtures + "/pngsuite/xcsn0g01.png", out, "--w", "10"])
        #expect(corrupt.status == 1 && corrupt.stderr.contains("corrupt_image"))
        let twelveBit = try ThumbdBinary.run(["thumbnail", Self.fixtures + "/testorig12.jpg", out, "--w", "10"])
        #expect(twelveBit.status == 1 && twelveBit.stderr.contains("unsupported_format"))
        #expect(!FileManager.default.fileExists(atPath: out), "no output file on failure")
    }

    @Test func usageErrorsExit2AndHelpAndVersionExit0() throws {
        let bad = try ThumbdBinary.run(["thumbnail", "in.jpg"])
        #expect(bad.status == 2 && bad.stderr.contains("INPUT and OUTPUT"))
        #expect(try ThumbdBinary.run(["--bogus"]).status == 2)
        let cover = try ThumbdBinary.run(["thumbnail", Self.fixtures + "/rocket.jpg", NSTemporaryDirectory() + "never.jpg",
                             "--fit", "cover", "--w", "10"])
        #expect(cover.status == 2 && cover.stderr.contains("needs both --w and --h"), "\(cover)")
        let version = try ThumbdBinary.run(["--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("thumbd ") && version.stdout.contains("libjpeg"))
        let help = try ThumbdBinary.run(["--help"])
        #expect(help.status == 0 && help.stdout.contains("thumbd thumbnail INPUT OUTPUT"))
        // The help lists every format the command writes (it once left out webp and avif).
        let listed = CommandLineParser.commandLineFormats.map(\.rawValue).joined(separator: "|")
        #expect(help.stdout.contains("--format \(listed)"), "\(help.stdout)")
    }
}

/// JPEG XL on the command line (CommandLine.md): written by `.jxl` or
/// `--format jxl`, and read whatever `limits.jpegXLSources` says, since the
/// operator chose the file (SPEC §16).
@Suite struct JPEGXLCommandTests {
    private func temp(_ name: String) -> String {
        NSTemporaryDirectory() + "thumbd-cli-\(UUID().uuidString)-\(name)"
    }

    @Test func writesJPEGXLByExtensionAndByFormat() throws {
        let byExtension = temp("out.jxl"), byFormat = temp("out.bin")
        defer { for f in [byExtension, byFormat] { try? FileManager.default.removeItem(atPath: f) } }
        let input = ThumbnailCommandTests.fixtures + "/rocket.jpg"
        #expect(try ThumbdBinary.run(["thumbnail", input, byExtension, "--w", "80"]).status == 0)
        let jxl = try #require(FileManager.default.contents(atPath: byExtension))
        #expect(jxl.prefix(2) == Data([0xFF, 0x0A]), "a bare JPEG XL codestream")
        #expect(try ThumbdBinary.run(["thumbnail", input, byFormat, "--w", "80", "--format", "jxl"]).status == 0)
        #expect(FileManager.default.contents(atPath: byFormat) == jxl, "the same bytes either way")
    }

    @Test func readsJPEGXLFiles() throws {
        let out = temp("out.png")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let input = ThumbnailCommandTests.fixtures + "/jxl/orient-6.jxl"
        #expect(try ThumbdBinary.run(["thumbnail", input, out, "--w", "16"]).status == 0)
        let png = try #require(FileManager.default.contents(atPath: out))
        // 24×32 stored, orientation 6: 32×24 upright, so 16×12.
        #expect(Array(png[16..<24]) == [0, 0, 0, 16, 0, 0, 0, 12])
        let info = try ThumbdBinary.run(["info", ThumbnailCommandTests.fixtures + "/jxl/anim3.jxl"])
        #expect(info.status == 0)
        let object = (try? JSONSerialization.jsonObject(with: Data(info.stdout.utf8))) as? [String: Any] ?? [:]
        #expect(object["format"] as? String == "jxl" && object["frames"] as? Int == 3 && object["animated"] as? Bool == true)
        let cut = temp("cut.jxl")
        defer { try? FileManager.default.removeItem(atPath: cut) }
        let whole = try #require(FileManager.default.contents(atPath: ThumbnailCommandTests.fixtures + "/jxl/photo.jxl"))
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: cut))
        let failed = try ThumbdBinary.run(["thumbnail", cut, out, "--w", "16"])
        #expect(failed.status == 1 && failed.stderr.contains("corrupt_image"))
    }
}
