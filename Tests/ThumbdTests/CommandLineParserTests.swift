import Testing
import ThumbImaging
@testable import thumbd

@Suite struct CommandLineParserTests {
    @Test func noArgumentsServesOnDefaults() throws {
        #expect(try CommandLineParser.parse([]) == .serve(configPath: nil, listen: nil))
        #expect(try CommandLineParser.parse(["--config", "/etc/t.json", "--listen=[::1]:9000"])
                == .serve(configPath: "/etc/t.json", listen: "[::1]:9000"))
    }

    @Test func helpAndVersion() throws {
        #expect(try CommandLineParser.parse(["--help"]) == .help)
        #expect(try CommandLineParser.parse(["--version"]) == .version)
    }

    @Test func checkConfigNeedsAFile() throws {
        #expect(try CommandLineParser.parse(["check-config", "--config", "a.json"]) == .checkConfig(configPath: "a.json"))
        #expect(throws: UsageError.self) { try CommandLineParser.parse(["check-config"]) }
    }

    @Test func thumbnailTakesEveryOption() throws {
        let command = try CommandLineParser.parse(["thumbnail", "in.jpg", "out.bin", "--w", "200", "--h=100",
                                                   "--fit", "cover", "--format", "png", "--q", "70", "--enlarge"])
        var expected = ThumbnailCommand(input: "in.jpg", output: "out.bin", format: .png)
        expected.width = 200
        expected.height = 100
        expected.fit = .cover
        expected.quality = 70
        expected.enlarge = true
        #expect(command == .thumbnail(expected))
    }

    @Test func outputExtensionPicksTheFormat() {
        #expect(CommandLineParser.formatFromExtension("a/b.JPG") == .jpeg)
        #expect(CommandLineParser.formatFromExtension("b.jpeg") == .jpeg)
        #expect(CommandLineParser.formatFromExtension("b.png") == .png)
        #expect(CommandLineParser.formatFromExtension("b.JXL") == .jxl)
        #expect(CommandLineParser.formatFromExtension("b.rgba") == .rgba)
        #expect(CommandLineParser.formatFromExtension("b.webp") == .webp)
        #expect(CommandLineParser.formatFromExtension("b.AVIF") == .avif)
        #expect(CommandLineParser.formatFromExtension("b.gif") == .auto)
        #expect(CommandLineParser.formatFromExtension("dir.png/noext") == .auto)
    }

    @Test(arguments: [
        ["thumbnail", "in.jpg"],
        ["thumbnail", "in.jpg", "out.jpg"],
        ["thumbnail", "in.jpg", "out.jpg", "--w", "0"],
        ["thumbnail", "in.jpg", "out.jpg", "--w", "abc"],
        ["thumbnail", "in.jpg", "out.jpg", "--w", "10", "--q", "101"],
        ["thumbnail", "in.jpg", "out.jpg", "--w", "10", "--fit", "stretch"],
        ["thumbnail", "in.jpg", "out.jpg", "--fit", "cover", "--w", "10"],
        ["thumbnail", "in.jpg", "out.jpg", "--fit", "fill", "--h", "10"],
        ["thumbnail", "in.jpg", "out.jpg", "--w", "10", "--format", "gif"],
        ["thumbnail", "in.jpg", "out.jpg", "--w", "10", "--w", "20"],
        ["thumbnail", "in.jpg", "out.jpg", "--w"],
        ["thumbnail", "in.jpg", "out.jpg", "--w", "10", "--bogus"],
        ["serve-now"],
    ])
    func badCommandLinesAreUsageErrors(_ args: [String]) {
        #expect(throws: UsageError.self) { try CommandLineParser.parse(args) }
    }
}
