import Foundation
import ThumbAPI
import ThumbRender
import ThumbService

/// `thumbd info INPUT` (CommandLine.md): the `/info` object of a local file,
/// from the same canonical decode the service uses, without `url`; `bytes`
/// is the file's size. JPEG XL files are read, as `thumbd thumbnail` reads
/// them (a person's own file).
enum InfoCommand {
    /// Prints the object on stdout and returns 0, or 1 with a message on stderr.
    static func run(path: String, limits: PipelineLimits = PipelineLimits(jpegXLSources: true)) -> Int32 {
        guard let data = FileManager.default.contents(atPath: path) else {
            return fail("cannot read \(path)")
        }
        let source = [UInt8](data)
        do throws(RenderError) {
            let header = try ThumbnailPipeline.probe(source: source, limits: limits)
            let facts = try ThumbnailPipeline.facts(source: source, header: header, sha256: "")
            let answer = InfoAnswer(SourceInfo(url: "", bytes: source.count, facts: facts))
            FileHandle.standardOutput.write(Data(answer.body + [UInt8(ascii: "\n")]))
            return 0
        } catch {
            return fail("\(path): \(error.message) (\(error.code))")
        }
    }

    private static func fail(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("thumbd: \(message)\n".utf8))
        return 1
    }
}
