import Foundation
import Testing
@testable import thumbd

/// `thumbd info FILE` (CommandLine.md): the `/info` object of a local file, as the
/// real binary prints it.
@Suite struct InfoCommandTests {

    private func object(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    @Test func printsTheFactsOfAFile() throws {
        let input = ThumbnailCommandTests.fixtures + "/rocket.jpg"
        let r = try ThumbdBinary.run(["info", input])
        #expect(r.status == 0 && r.stderr.isEmpty && r.stdout.hasSuffix("}\n") && r.stdout.filter { $0 == "\n" }.count == 1)
        let info = object(r.stdout)
        let size = try FileManager.default.attributesOfItem(atPath: input)[.size] as? Int
        #expect(info["url"] == nil, "a local file has no url")
        #expect(info["format"] as? String == "jpeg" && info["width"] as? Int == 640 && info["height"] as? Int == 427)
        #expect(info["bytes"] as? Int == size && info["orientation"] as? Int == 1 && info["hasAlpha"] as? Bool == false)
        #expect((info["thumbhash"] as? String).flatMap { Data(base64Encoded: $0) }.map { (17...25).contains($0.count) } == true)
        #expect((info["averageColor"] as? String)?.range(of: "^#[0-9a-f]{6}$", options: .regularExpression) != nil)
        // The same bytes on every run: the facts are deterministic.
        #expect(try ThumbdBinary.run(["info", input]).stdout == r.stdout)
    }

    @Test func orientationAnimationAndAlphaComeFromTheFile() throws {
        let six = object(try ThumbdBinary.run(["info", ThumbnailCommandTests.fixtures + "/orient/orient-6.jpg"]).stdout)
        #expect(six["orientation"] as? Int == 6)
        let gif = object(try ThumbdBinary.run(["info", ThumbnailCommandTests.fixtures + "/animated/anim3.gif"]).stdout)
        #expect(gif["format"] as? String == "gif" && gif["frames"] as? Int == 3 && gif["animated"] as? Bool == true)
        let webp = object(try ThumbdBinary.run(["info", ThumbnailCommandTests.fixtures + "/formats/photo-alpha.webp"]).stdout)
        #expect(webp["hasAlpha"] as? Bool == true && webp["frames"] as? Int == 1 && webp["animated"] as? Bool == false)
    }

    @Test func badInputsExitOneAndBadUsageTwo() throws {
        let missing = try ThumbdBinary.run(["info", "/nonexistent/x.jpg"])
        #expect(missing.status == 1 && missing.stderr.contains("cannot read") && missing.stdout.isEmpty)
        let path = NSTemporaryDirectory() + "thumbd-info-\(UUID().uuidString).txt"
        defer { try? FileManager.default.removeItem(atPath: path) }
        FileManager.default.createFile(atPath: path, contents: Data("not an image".utf8))
        let text = try ThumbdBinary.run(["info", path])
        #expect(text.status == 1 && text.stderr.contains("unsupported_format"))
        for args in [["info"], ["info", "a", "b"], ["info", "--w", "3"]] {
            #expect(try ThumbdBinary.run(args).status == 2, "\(args)")
        }
    }
}
