import Foundation
import ThumbService

extension ThumbnailCommand {
    /// Runs the service's decode/scale/encode pipeline on a local file (CommandLine.md).
    /// Returns the exit status: 0, or 1 with a message on stderr.
    func run(limits: PipelineLimits = PipelineLimits(), defaultQuality: Int = 82) -> Int32 {
        guard let data = FileManager.default.contents(atPath: input) else {
            return fail("cannot read \(input)")
        }
        let variant = PreparedVariant(width: width, height: height, fit: fit, enlarge: enlarge)
        do throws(ServiceError) {
            let bitmap = try ThumbnailPipeline.prepare(source: [UInt8](data), variant: variant, limits: limits)
            let encoded = try ThumbnailPipeline.encode(bitmap, format: format, quality: quality ?? defaultQuality)
            guard FileManager.default.createFile(atPath: output, contents: Data(encoded.bytes)) else {
                return fail("cannot write \(output)")
            }
            return 0
        } catch {
            return fail("\(input): \(error.message) (\(error.code))")
        }
    }

    private func fail(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("thumbd: \(message)\n".utf8))
        return 1
    }
}
