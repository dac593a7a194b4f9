import Foundation
import ThumbRender

extension ThumbnailCommand {
    /// Runs the service's decode/scale/encode pipeline on a local file (CommandLine.md).
    /// Returns the exit status: 0, or 1 with a message on stderr. JPEG XL
    /// files are read whatever `limits.jpegXLSources` says (SPEC §16): a
    /// person's own file, which the operator chose.
    ///
    /// `--q auto` searches the file's q as the daemon does (at
    /// `AutoQuality.defaultTarget`) and prints `quality: Q` on stderr.
    func run(limits: PipelineLimits = PipelineLimits(jpegXLSources: true), defaultQuality: Int = 80) -> Int32 {
        guard let data = FileManager.default.contents(atPath: input) else {
            return fail("cannot read \(input)")
        }
        do throws(RenderError) {
            var variant = self.variant(defaultQuality: defaultQuality)
            let source = [UInt8](data)
            let encoded: EncodedThumbnail
            let auto = variant.quality == AutoQuality.unresolved
            if animated && variant.format == .webp,
               let animation = try animationPlan(source: source, variant: variant.prepared, limits: limits) {
                if auto { variant.quality = try autoQuality(source: source, plan: animation, format: .webp, variant) }
                encoded = try ThumbnailPipeline.renderAnimation(source: source, plan: animation, quality: variant.quality,
                                                                limits: limits).encoded
            } else {
                let bitmap = try ThumbnailPipeline.prepare(source: source, variant: variant.prepared, limits: limits)
                let format = variant.format.resolved(isOpaque: bitmap.isOpaque)
                if auto && format.usesQuality {
                    let plan = try ThumbnailPipeline.plan(source: source, variant: variant.prepared, limits: limits)
                    variant.quality = try autoQuality(source: source, plan: plan, format: format, variant)
                }
                encoded = try ThumbnailPipeline.encode(bitmap, format: variant.format, quality: variant.quality,
                                                       background: variant.flattenBackground)
            }
            if auto && encoded.format.usesQuality {
                FileHandle.standardError.write(Data("quality: \(variant.quality)\n".utf8))
            }
            guard FileManager.default.createFile(atPath: output, contents: Data(encoded.bytes)) else {
                return fail("cannot write \(output)")
            }
            return 0
        } catch {
            return fail("\(input): \(error.message) (\(error.code))")
        }
    }

    /// The plan of an animated source (SPEC §14), its `attention` window
    /// placed on the first frame's focus; nil for a still.
    private func animationPlan(source: [UInt8], variant: PreparedVariant,
                               limits: PipelineLimits) throws(RenderError) -> RenderPlan? {
        let plan = try ThumbnailPipeline.plan(source: source, variant: variant, limits: limits)
        guard plan.isAnimated else { return nil }
        guard plan.geometry.needsFocus else { return plan }
        return plan.placed(onFocus: try ThumbnailPipeline.facts(source: source, header: plan.header, sha256: "").focus)
    }

    /// `q=auto`'s search for `format` on the file's canonical rendition (SPEC §17).
    private func autoQuality(source: [UInt8], plan: RenderPlan, format: OutputFormat,
                             _ variant: ThumbnailVariant) throws(RenderError) -> Int {
        let rendition = try AutoQuality.canonicalRendition(source: source, header: plan.header)
        return try AutoQuality.search(rendition, format: format, target: AutoQuality.defaultTarget,
                                      background: variant.flattenBackground).q
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
