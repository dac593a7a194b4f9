import ThumbCodec
import ThumbImaging

/// An animated rendition (SPEC §14) and what it took.
public struct AnimatedRendition: Sendable {
    /// The animated WebP (a still WebP when every frame came out the same:
    /// libwebp then writes one image).
    public let encoded: EncodedThumbnail
    /// Frames the encoded image holds (`X-Image-Frames`, SPEC §14): those
    /// rendered (the source's, up to `limits.maxAnimationFrames`) after
    /// libwebp merged each unchanged one into the one before, summing their
    /// durations; 1 when the answer is a still.
    public let frames: Int
    /// The first frame's prepared bitmap, the same bytes `prepare` gives for
    /// the plan (what `animated=0` and every other format are made from).
    public let firstFrame: Bitmap
}

extension RenderPlan {
    /// True for a GIF or WebP of two frames or more: `format=webp` animates it.
    public var isAnimated: Bool { header.animation != nil }

    /// The frames an animated render produces: the source's, at most
    /// `limits.maxAnimationFrames` (the rest are dropped); 1 for a still.
    public func animationFrames(limits: PipelineLimits) -> Int {
        guard let animation = header.animation else { return 1 }
        return max(1, min(animation.frames, limits.maxAnimationFrames))
    }

    /// Bytes an animated render holds at its peak (SPEC §8 and §14), one
    /// frame at a time: the original; the reader's canvases
    /// (`AnimationDecoder.estimatedMemory`); one frame's scaling and
    /// composing (`ThumbnailRenderer.peakBytes` at the canvas size); the
    /// scaled frame, its copy in libwebp's picture and the first frame kept
    /// for the result; and the encoder (`AnimatedWebPEncoder.estimatedMemory`:
    /// its canvases and candidates, and every encoded frame twice at the end).
    public func estimatedAnimationMemory(limits: PipelineLimits) -> Int {
        let frames = animationFrames(limits: limits)
        let canvas = (width: header.width, height: header.height)
        let renderer = ThumbnailPipeline.renderer(for: self)
        let result = geometry.width * geometry.height * 4
        return sourceBytes + AnimationDecoder.estimatedMemory(header: header, frames: frames)
            + renderer.peakBytes(decodedWidth: canvas.width, decodedHeight: canvas.height) + 3 * result
            + AnimatedWebPEncoder.estimatedMemory(width: geometry.width, height: geometry.height, frames: frames)
    }
}

extension ThumbnailPipeline {
    /// `limits.maxAnimationPixels` (SPEC §14): the canvas's pixels times the
    /// frames an animated render of `plan` produces, decided from the header
    /// (the frame count is the structure walk's), before any frame is decoded.
    public static func checkAnimationPixels(plan: RenderPlan, limits: PipelineLimits) throws(RenderError) {
        let frames = plan.animationFrames(limits: limits)
        let (pixels, overflow) = (plan.header.width * plan.header.height).multipliedReportingOverflow(by: frames)
        if overflow || pixels > limits.maxAnimationPixels {
            throw .imageTooLarge("animation of \(frames) frames of \(plan.header.width)x\(plan.header.height) pixels "
                                 + "exceeds maxAnimationPixels \(limits.maxAnimationPixels)")
        }
    }

    /// The animated WebP of `plan` at `quality` (SPEC §14): every frame
    /// composited as the source defines, scaled and composed as `prepare`
    /// does a still — the plan's geometry, one crop window for every frame
    /// (place an `attention` window on the focus before), orientation, blur,
    /// sharpen, `contain`'s background — one frame at a time, with the
    /// source's durations and loop count.
    ///
    /// Refuses `maxAnimationPixels` before decoding; renders at most
    /// `maxAnimationFrames`; past `deadline` (the whole animation's) stops
    /// with `.renderTimedOut`. A plan that is not animated gives a one-frame
    /// WebP of its still.
    public static func renderAnimation(source: [UInt8], plan: RenderPlan, quality: Int, limits: PipelineLimits,
                                       deadline: RenderDeadline = .none) throws(RenderError) -> AnimatedRendition {
        guard let animation = plan.header.animation else {
            let bitmap = try prepare(source: source, plan: plan, deadline: deadline)
            let encoded = try encode(bitmap, format: .webp, quality: quality, deadline: deadline)
            return AnimatedRendition(encoded: encoded, frames: 1, firstFrame: bitmap)
        }
        try checkAnimationPixels(plan: plan, limits: limits)
        let geometry = plan.geometry
        var first: Bitmap?
        let bytes: [UInt8]
        let frames: Int
        do {
            // thumbd's q through the WebP table (SPEC §17), at the animation encoder's own method.
            let encoder = try AnimatedWebPEncoder(width: geometry.width, height: geometry.height,
                                                  quality: Int(QualityScale.webp(quality).quality),
                                                  loopCount: animation.loopCount)
            _ = try AnimationDecoder.decode(source, header: plan.header, maxFrames: plan.animationFrames(limits: limits),
                                            deadline: deadline) { frame throws(CodecError) in
                var renderer = renderer(for: plan)
                frame.feed(into: &renderer)
                // finish() has no hook of its own: the deadline is looked at after it.
                let scaled = renderer.finish()
                if deadline.hasPassed { throw .deadlineExceeded }
                if first == nil { first = scaled }
                try encoder.add(scaled, durationMilliseconds: frame.durationMilliseconds, deadline: deadline)
            }
            bytes = try encoder.finish()
            frames = encoder.encodedFrames
        } catch .deadlineExceeded {
            throw .renderTimedOut
        } catch .encodeFailed(let message) {
            throw .internalError("encoding an animated webp failed: \(message)")
        } catch {
            throw RenderError(error)
        }
        if deadline.hasPassed { throw .renderTimedOut }
        guard let first else { throw .corruptImage("the animation has no frame") }
        return AnimatedRendition(encoded: EncodedThumbnail(bytes: bytes, format: .webp, width: geometry.width,
                                                           height: geometry.height),
                                 frames: frames, firstFrame: first)
    }
}
