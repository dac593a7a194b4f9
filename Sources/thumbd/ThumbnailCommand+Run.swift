import Foundation
import ThumbService

extension ThumbnailCommand {
    /// Runs the service's decode/scale/encode pipeline on a local file (CommandLine.md).
    /// Returns the exit status: 0, or 1 with a message on stderr.
    func run(limits: PipelineLimits = PipelineLimits(), defaultQuality: Int = 82) -> Int32 {
        guard let data = FileManager.default.contents(atPath: input) else {
            return fail("cannot read \(input)")
        }
        do throws(ServiceError) {
            let variant = self.variant(defaultQuality: defaultQuality)
            let bitmap = try ThumbnailPipeline.prepare(source: [UInt8](data), variant: variant.prepared, limits: limits)
            let encoded = try ThumbnailPipeline.encode(bitmap, format: variant.format, quality: variant.quality,
                                                       background: variant.flattenBackground)
            guard FileManager.default.createFile(atPath: output, contents: Data(encoded.bytes)) else {
                return fail("cannot write \(output)")
            }
            return 0
        } catch {
            return fail("\(input): \(error.message) (\(error.code))")
        }
    }

    /// The variant a `/thumbnail` request with these options (and `dpr` 1) would render.
    func variant(defaultQuality: Int) -> ThumbnailVariant {
        let plain = ThumbnailVariant(prepared: PreparedVariant(width: width, height: height, fit: fit, enlarge: enlarge),
                                     format: format, quality: quality ?? defaultQuality)
        return composition.applied(to: plain)
    }

    private func fail(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("thumbd: \(message)\n".utf8))
        return 1
    }
}
