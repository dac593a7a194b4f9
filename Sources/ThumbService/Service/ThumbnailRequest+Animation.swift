import ThumbRender

/// `format=auto` and animated sources (API.md § `format=auto` and `Vary`):
/// while `output.autoFormats` is non-empty, an animated GIF or WebP source
/// (2 frames or more) with `animated` not 0 is answered in WebP whenever
/// `Accept` lists `image/webp`, in `autoFormats` or not, so that an
/// animation negotiated to AVIF or JPEG XL (a still of its first frame), or
/// left to the PNG/JPEG rule, stays animated. Whether the source is
/// animated is known only from its header, so the request carries both
/// variants and the render (or known facts) picks.
extension ThumbnailRequest {
    /// The WebP variant an animated source is answered with, or nil when
    /// the request's own variant serves it: an explicit format, `animated=0`,
    /// negotiation off, an `Accept` without `image/webp`, or WebP already.
    static func animationVariant(_ variant: ThumbnailVariant, accept: String?,
                                 negotiates: Bool) -> ThumbnailVariant? {
        guard negotiates, variant.animated != false, variant.format != .webp,
              AcceptNegotiation.choose(from: [.webp], accept: accept) == .webp else { return nil }
        var webp = variant
        webp.format = .webp
        // `bg` flattens only JPEG; with WebP it is inert (API.md § Cache key).
        webp.background = nil
        return webp
    }

    /// This request as the animated source's answer: its WebP variant, which
    /// keys the rendition, its ETag and its encoding; nil when none applies.
    var answeringAnimation: ThumbnailRequest? {
        guard let animationVariant else { return nil }
        var request = self
        request.variant = animationVariant
        request.animationVariant = nil
        return request
    }

    /// The request a render answers once the source's header or facts say
    /// whether it is an animated GIF or WebP.
    func answering(sourceIsAnimated: Bool) -> ThumbnailRequest {
        sourceIsAnimated ? answeringAnimation ?? self : self
    }
}

extension OriginalFacts {
    /// An animated GIF or WebP (2 frames or more): what renders as an
    /// animation. A JPEG XL animation is `animated` in `/info` but renders
    /// its first frame in every format (API.md § Animation).
    var rendersAsAnimation: Bool { animated && format != .jxl }
}

extension ThumbnailService {
    /// The rendition in memory that answers `request`: its own variant's,
    /// unless that is a still of an animated source and the request keeps
    /// animations in WebP — then the WebP variant's, when the source is
    /// known animated by it.
    func memoryRendition(_ request: ThumbnailRequest) -> Rendition? {
        let url = request.sourceURL
        if case .rendition(let r)? = memory.get(.rendition(url: url, request.variant)),
           !(r.fromAnimatedSource && request.animationVariant != nil) {
            return r
        }
        guard let webp = request.animationVariant,
              case .rendition(let r)? = memory.get(.rendition(url: url, webp)), r.fromAnimatedSource else { return nil }
        return r
    }
}
