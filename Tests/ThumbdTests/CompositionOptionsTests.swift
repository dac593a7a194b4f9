import Foundation
import Testing
import ThumbImaging
import ThumbRender
@testable import ThumbService
@testable import thumbd

/// `thumbd thumbnail`'s `--gravity`, `--fp`, `--bg`, `--blur`, `--sharpen` and
/// `--fit contain` (CommandLine.md): the query's rules, as usage errors.
@Suite struct CompositionOptionsTests {
    private func thumbnail(_ options: [String]) throws(UsageError) -> ThumbnailCommand {
        guard case .thumbnail(let command) = try CommandLineParser.parse(["thumbnail", "in.jpg", "out.jpg"] + options) else {
            throw UsageError(message: "not a thumbnail command")
        }
        return command
    }

    @Test func everyFlagIsReadWithTheQuerysValues() throws {
        let command = try thumbnail(["--w", "100", "--h", "80", "--fit", "cover", "--gravity", "southeast",
                                     "--bg=FFAA0080", "--blur", "2.5", "--sharpen", "10"])
        #expect(command.fit == .cover)
        #expect(command.composition == CompositionParameters(gravity: .southeast,
                                                             background: RGBAColor(r: 255, g: 170, b: 0, a: 128),
                                                             blurTenths: 25, sharpenTenths: 100))
        let pointed = try thumbnail(["--w", "100", "--h", "80", "--fit", "cover", "--fp", "0.25,1.0"])
        #expect(pointed.composition == CompositionParameters(focalPoint: FocalPoint(x: 250, y: 1000)))
        #expect(try thumbnail(["--w", "100", "--h", "80", "--fit", "contain"]).fit == .contain)
    }

    /// The command renders the variant the same `/thumbnail` query names
    /// (at `dpr` 1), inert values dropped alike.
    @Test func theCommandsVariantIsTheQuerys() throws {
        let cases: [([String], [(String, String)])] = [
            (["--w", "100", "--h", "80", "--fit", "cover", "--gravity", "north", "--blur", "3", "--format", "png"],
             [("w", "100"), ("h", "80"), ("fit", "cover"), ("gravity", "north"), ("blur", "3"), ("format", "png")]),
            (["--w", "100", "--h", "80", "--fit", "contain", "--bg", "ff0000", "--format", "jpeg", "--q", "60"],
             [("w", "100"), ("h", "80"), ("fit", "contain"), ("bg", "ff0000"), ("format", "jpeg"), ("q", "60")]),
            (["--w", "100", "--gravity", "north", "--bg", "ff0000", "--format", "webp", "--sharpen", "0.3"],
             [("w", "100"), ("gravity", "north"), ("bg", "ff0000"), ("format", "webp"), ("sharpen", "0.3")]),
            (["--w", "100", "--h", "80", "--fit", "cover", "--fp", "0.1,0.9"],
             [("w", "100"), ("h", "80"), ("fit", "cover"), ("fp", "0.1,0.9"), ("format", "jpeg")]),
        ]
        for (options, pairs) in cases {
            let command = try thumbnail(options)
            let request = try ThumbnailRequest(query: [(name: "url", value: "https://cdn.example/a.jpg")]
                                               + pairs.map { (name: $0.0, value: $0.1) },
                                               config: ServiceConfiguration())
            #expect(command.variant(defaultQuality: 80) == request.variant, "\(options)")
        }
    }

    @Test(arguments: [
        ["--w", "10", "--h", "10", "--fit", "cover", "--gravity", "CENTER"],
        ["--w", "10", "--h", "10", "--fit", "cover", "--gravity", "centre"],
        ["--w", "10", "--h", "10", "--fit", "cover", "--fp", "1e9"],
        ["--w", "10", "--h", "10", "--fit", "cover", "--fp", "0.5"],
        ["--w", "10", "--h", "10", "--fit", "cover", "--fp", "0.5,0.5,0.5"],
        ["--w", "10", "--h", "10", "--fit", "cover", "--fp", "1.001,0"],
        ["--w", "10", "--h", "10", "--fit", "cover", "--fp", "0.5,0.5", "--gravity", "north"],
        ["--w", "10", "--h", "10", "--fp", "0.5,0.5"],
        ["--w", "10", "--h", "10", "--fit", "contain", "--fp", "0.5,0.5"],
        ["--w", "10", "--h", "10", "--fit", "cover", "--fp"],
        ["--w", "10", "--bg", "zzzzzz"],
        ["--w", "10", "--bg", "#ffffff"],
        ["--w", "10", "--blur", "0.2"],
        ["--w", "10", "--blur", "100.1"],
        ["--w", "10", "--blur", "1e2"],
        ["--w", "10", "--blur", "2.55"],
        ["--w", "10", "--blur", "5."],
        ["--w", "10", "--blur", "05"],
        ["--w", "10", "--blur", "-1"],
        ["--w", "10", "--sharpen", "11"],
        ["--w", "10", "--sharpen", "0.2"],
        ["--w", "10", "--blur", "1", "--blur", "2"],
        ["--w", "10", "--fit", "contain"],
        ["--h", "10", "--fit", "contain"],
        ["--w", "10", "--h", "10", "--fit", "CONTAIN"],
    ])
    func badOptionsAreUsageErrors(_ options: [String]) {
        #expect(throws: UsageError.self) { try thumbnail(options) }
    }

    @Test func errorsNameTheirOption() {
        let cases: [([String], String)] = [
            (["--w", "10", "--h", "10", "--fit", "cover", "--gravity", "up"], "--gravity must be center, north"),
            (["--w", "10", "--h", "10", "--fit", "cover", "--fp", "2,2"], "--fp must be X,Y"),
            (["--w", "10", "--h", "10", "--fit", "cover", "--fp", "0,0", "--gravity", "west"], "--fp and --gravity"),
            (["--w", "10", "--fp", "0,0"], "--fp needs --fit cover"),
            (["--w", "10", "--bg", "red"], "--bg must be hex RRGGBB or RRGGBBAA, not 'red'"),
            (["--w", "10", "--blur", "0"], "--blur must be a decimal 0.3…100"),
            (["--w", "10", "--sharpen", "20"], "--sharpen must be a decimal 0.3…10"),
            (["--w", "10", "--fit", "pad"], "--fit must be inside, cover, fill or contain"),
            (["--w", "10", "--fit", "contain"], "--fit contain needs both --w and --h"),
        ]
        for (options, expected) in cases {
            do {
                _ = try thumbnail(options)
                Issue.record("accepted \(options)")
            } catch {
                #expect(error.message.hasPrefix(expected), "\(error.message)")
            }
        }
    }

    @Test func helpListsEveryCompositionFlag() {
        for flag in ["--fit inside|cover|fill|contain", "--gravity G", "--fp X,Y", "--bg RRGGBB[AA]", "--blur 0.3-100",
                     "--sharpen 0.3-10"] {
            #expect(usageText.contains(flag), "\(flag)")
        }
        for gravity in Gravity.allCases {
            #expect(usageText.contains(gravity.rawValue), "\(gravity)")
        }
    }

    // MARK: the real binary


    @Test func theBinaryRefusesBadValuesWithStatus2AndHelpsWithThem() throws {
        let input = ThumbnailCommandTests.fixtures + "/rocket.jpg"
        let out = NSTemporaryDirectory() + "thumbd-composition-\(UUID().uuidString).jpg"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let blur = try ThumbdBinary.run(["thumbnail", input, out, "--w", "10", "--blur", "2.55"])
        #expect(blur.status == 2 && blur.stderr.contains("--blur must be"), "\(blur)")
        let fp = try ThumbdBinary.run(["thumbnail", input, out, "--w", "10", "--h", "10", "--fit", "cover", "--fp", "0.5"])
        #expect(fp.status == 2 && fp.stderr.contains("--fp must be"), "\(fp)")
        #expect(!FileManager.default.fileExists(atPath: out))
        let help = try ThumbdBinary.run(["--help"])
        #expect(help.status == 0 && help.stdout.contains("--gravity G") && help.stdout.contains("--sharpen 0.3-10"))
    }

    /// `check-config` prints a preset's composition fields, the printout
    /// loads back, and a bad one exits 2 naming its key.
    @Test func checkConfigPrintsPresetCompositionAndRefusesBadFields() throws {
        let file = NSTemporaryDirectory() + "thumbd-presets-\(UUID().uuidString).json"
        let printed = NSTemporaryDirectory() + "thumbd-presets-\(UUID().uuidString).json"
        defer { for f in [file, printed] { try? FileManager.default.removeItem(atPath: f) } }
        let text = #"{"output": {"presets": {"hero": {"w": 64, "h": 64, "fit": "contain", "gravity": "south", "bg": "FFFFFF80", "blur": 1.5, "sharpen": 2}}}}"#
        FileManager.default.createFile(atPath: file, contents: Data(text.utf8))
        let check = try ThumbdBinary.run(["check-config", "--config", file])
        #expect(check.status == 0)
        let expected = #""hero": {"# + "\n" + """
                    "w": 64,
                    "h": 64,
                    "fit": "contain",
                    "gravity": "south",
                    "bg": "ffffff80",
                    "blur": 1.5,
                    "sharpen": 2
            """
        #expect(check.stdout.contains(expected), "\(check.stdout)")
        FileManager.default.createFile(atPath: printed, contents: Data(check.stdout.utf8))
        let again = try ThumbdBinary.run(["check-config", "--config", printed])
        #expect(again.status == 0 && again.stdout == check.stdout)

        let bad = #"{"output": {"presets": {"hero": {"w": 64, "blur": 0.25}}}}"#
        FileManager.default.createFile(atPath: file, contents: Data(bad.utf8))
        let refused = try ThumbdBinary.run(["check-config", "--config", file])
        #expect(refused.status == 2 && refused.stderr.contains("output.presets.hero.blur"), "\(refused)")
    }
}
