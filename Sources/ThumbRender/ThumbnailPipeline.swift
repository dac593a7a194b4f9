import ThumbCodec
import ThumbImaging

/// Limits the pipeline enforces (Configuration.md `limits`).
public struct PipelineLimits: Sendable, Equatable, Codable {
    /// Largest source accepted, in pixels (width·height, read from the header).
    public var maxSourcePixels: Int
    /// Largest result side in pixels.
    public var maxOutputDimension: Int
    /// Frames an animation renders at most; the rest are dropped (SPEC §14).
    public var maxAnimationFrames: Int
    /// Canvas pixels times the frames rendered an animation may reach
    /// (SPEC §14: `422 image_too_large` from the headers).
    public var maxAnimationPixels: Int
    /// Whether JPEG XL sources are read (`limits.jpegXLSources`, SPEC §3.2:
    /// libjxl 0.7 carries known CVEs, so the operator opts in); without it a
    /// JPEG XL source is `415 unsupported_format`. `thumbd thumbnail` and
    /// `thumbd info` set it: the operator chose the file.
    public var jpegXLSources: Bool

    public init(maxSourcePixels: Int = 50_000_000, maxOutputDimension: Int = 4096, maxAnimationFrames: Int = 200,
                maxAnimationPixels: Int = 200_000_000, jpegXLSources: Bool = false) {
        self.maxSourcePixels = maxSourcePixels
        self.maxOutputDimension = maxOutputDimension
        self.maxAnimationFrames = maxAnimationFrames
        self.maxAnimationPixels = maxAnimationPixels
        self.jpegXLSources = jpegXLSources
    }
}

/// What a render will do, known from the header alone.
public struct RenderPlan: Sendable, Codable {
    /// Bytes a header probe is admitted with (SourcesAndLimits.md § Renders),
    /// before its plan is known: the original's bytes, read whole; as much
    /// again for the libraries' copies of them (libjpeg keeps every APP1
    /// segment it reads, so a JPEG padded with them holds them twice); and
    /// `probeAllowance` for their parse structures. Never more than `budget`
    /// (`limits.maxDecodeMemoryBytes`): a probe that needs the whole budget
    /// runs alone.
    public static func probeCost(sourceBytes: Int, budget: Int) -> Int {
        min(budget, sourceBytes.multipliedReportingOverflow(by: 2).partialValue + probeAllowance)
    }

    /// What the libraries allocate to parse a header besides copies of the
    /// file (libheif's and libavif's box and item trees, giflib's and libpng's
    /// state): 8 MiB.
    public static let probeAllowance = 8 << 20

    public let header: ImageHeader
    public let geometry: ThumbnailGeometry
    /// The original's size: its bytes stay in memory for the whole decode.
    public let sourceBytes: Int
    /// What the render composes besides the geometry (blur, sharpen, `contain`'s background).
    public let variant: PreparedVariant

    /// The displayed size the decode must cover (the scaled image before the crop).
    var minimumDisplayedSize: (width: Int, height: Int) { (geometry.scaledWidth, geometry.scaledHeight) }

    /// True when the render decodes an AVIF/HEIC thumbnail item instead of
    /// the primary image (API.md § Formats read, "Embedded thumbnails").
    var usesEmbeddedThumbnail: Bool {
        ImageDecoder.usesEmbeddedThumbnail(header: header, minimumDisplayedSize: minimumDisplayedSize)
    }

    /// The plan with its `attention` window placed on `focus`.
    public func placed(onFocus focus: FocalPoint) -> RenderPlan {
        RenderPlan(header: header, geometry: geometry.needsFocus ? geometry.placed(onFocus: focus) : geometry,
                   sourceBytes: sourceBytes, variant: variant)
    }

    /// Bytes the decode is estimated to need at its peak (Configuration.md
    /// `maxDecodeMemoryBytes`): the decoder's own estimate, the result, and the
    /// original held while decoding (a small image padded with 48 MB of APP2
    /// segments must cost its 48 MB here). An embedded thumbnail's decode is
    /// estimated as its primary image's (`ImageDecoder.estimatedDecodeMemory`).
    ///
    /// The result is built as premultiplied linear floats (16 bytes a pixel)
    /// before it becomes bytes, and cropping or turning copies it once more: a
    /// 4096×4096 RGBA answer peaks at about 330 MiB, not the 64 MiB of its
    /// bytes (attacks.sh, Testing.md § Attacks and storms).
    ///
    /// Blur and sharpen work in place on the floats, with one more copy of
    /// them at most; `contain` pads onto a canvas, one more copy of the result.
    public var estimatedMemory: Int {
        sourceBytes + ImageDecoder.estimatedDecodeMemory(header: header, minimumDisplayedSize: minimumDisplayedSize)
            + composeMemory
    }

    /// What scaling and composing the decoded image holds at its peak
    /// (`ThumbnailRenderer.peakBytes`): the box-reduced floats of the decode
    /// at the scale it is decoded at, the resampler's horizontal pass and
    /// result, the filters' copy, the crop, turn and canvas copies. The
    /// reduced floats are the big part when the result is more than half the
    /// source's side (no box step): a 4000×4000 PNG at w=1500 holds 256 MB of
    /// them and a 96 MB pass; counting only the scaled result let its worker
    /// meet its cap (issue 34).
    var composeMemory: Int {
        let decoded = ImageDecoder.decodedSize(header: header, minimumDisplayedSize: minimumDisplayedSize)
        return ThumbnailPipeline.renderer(for: self).peakBytes(decodedWidth: decoded.width,
                                                              decodedHeight: decoded.height)
    }

    /// Threads the render's decode can use (`JobBudget.tileThreads`): a HEIC
    /// grid's tiles decode in parallel, each thread's decoder counted in
    /// `estimatedMemory`; any other decode, an embedded thumbnail's too, uses one.
    public var tileThreads: Int { usesEmbeddedThumbnail ? 1 : ImageDecoder.tileThreads(header: header) }

    /// `estimatedMemory` when the render also computes the original's facts
    /// (`ThumbnailPipeline.prepareWithFacts`): the canonical copy's scaler
    /// beside a shared decode, or a canonical decode of its own before it.
    public var estimatedMemoryWithFacts: Int {
        ThumbnailPipeline.sharesCanonicalDecode(self)
            ? estimatedMemory + ThumbnailPipeline.canonicalScalerMemory(header)
            : max(estimatedMemory, ThumbnailPipeline.canonicalDecodeMemory(header, sourceBytes: sourceBytes))
    }
}

/// An encoded rendition, ready to send.
public struct EncodedThumbnail: Sendable {
    public let bytes: [UInt8]
    /// Never `.auto`.
    public let format: OutputFormat
    public let width: Int
    public let height: Int
    /// Frames of an animated WebP; 1 for a still image.
    public let frames: Int

    public init(bytes: [UInt8], format: OutputFormat, width: Int, height: Int, frames: Int = 1) {
        self.bytes = bytes
        self.format = format
        self.width = width
        self.height = height
        self.frames = frames
    }
}

/// Decode → scale → encode, synchronously, on the calling thread. The service
/// runs it on render workers; the CLI runs it once. No I/O.
public enum ThumbnailPipeline {
    /// Reads the header and lays out the result without decoding pixels.
    /// The header, within `limits.maxSourcePixels`.
    public static func probe(source: [UInt8], limits: PipelineLimits) throws(RenderError) -> ImageHeader {
        do {
            return try ImageDecoder.probe(source, maxPixels: limits.maxSourcePixels, allowJPEGXL: limits.jpegXLSources)
        } catch {
            throw RenderError(error)
        }
    }

    public static func plan(source: [UInt8], variant: PreparedVariant,
                            limits: PipelineLimits) throws(RenderError) -> RenderPlan {
        let header = try probe(source: source, limits: limits)
        let geometry: ThumbnailGeometry
        do {
            geometry = try ThumbnailGeometry(sourceWidth: header.displayedWidth,
                                             sourceHeight: header.displayedHeight,
                                             width: variant.width, height: variant.height,
                                             fit: variant.fit, enlarge: variant.enlarge,
                                             gravity: variant.gravity, focalPoint: variant.focalPoint)
        } catch {
            throw .badRequest(error.description)
        }
        if max(geometry.width, geometry.height) > limits.maxOutputDimension {
            throw .badRequest("result \(geometry.width)x\(geometry.height) exceeds maxOutputDimension \(limits.maxOutputDimension)")
        }
        return RenderPlan(header: header, geometry: geometry, sourceBytes: source.count, variant: variant)
    }

    /// The prepared bitmap of a plan: decoded at reduced scale where the
    /// format allows (an AVIF or HEIC image from an embedded thumbnail that
    /// covers the result), oriented, scaled and cropped. Past `deadline`
    /// (Configuration.md `maxRenderSeconds`) it stops with `.renderTimedOut`.
    /// `tileThreads`: threads a HEIC grid's tiles may decode on (`JobBudget.tileThreads`).
    public static func prepare(source: [UInt8], plan: RenderPlan, deadline: RenderDeadline = .none,
                               tileThreads: Int = 1) throws(RenderError) -> Bitmap {
        var renderer = renderer(for: plan)
        do {
            try ImageDecoder.decode(source, header: plan.header, minimumDisplayedSize: plan.minimumDisplayedSize,
                                    useEmbeddedThumbnail: true, deadline: deadline, tileThreads: tileThreads,
                                    into: &renderer)
        } catch {
            throw RenderError(error)
        }
        // The last scaling step runs in finish() and has no hook of its own.
        let bitmap = renderer.finish()
        if deadline.hasPassed { throw .renderTimedOut }
        return bitmap
    }

    /// The renderer of `plan`: its geometry, orientation, filters (sigmas in
    /// result pixels) and `contain`'s background.
    static func renderer(for plan: RenderPlan) -> ThumbnailRenderer {
        let v = plan.variant
        return ThumbnailRenderer(geometry: plan.geometry, orientation: plan.header.orientation,
                                 blurSigma: v.blurTenths.map { Float($0) / 10 },
                                 sharpenSigma: v.sharpenTenths.map { Float($0) / 10 }, background: v.background)
    }

    /// `plan` then `prepare` (with the original's facts computed on the way
    /// when an `attention` window needs its focus; the CLI keeps none).
    public static func prepare(source: [UInt8], variant: PreparedVariant,
                               limits: PipelineLimits) throws(RenderError) -> Bitmap {
        let plan = try plan(source: source, variant: variant, limits: limits)
        guard plan.geometry.needsFocus else { return try prepare(source: source, plan: plan) }
        return try prepareWithFacts(source: source, plan: plan, sha256: "").0
    }

    /// Encodes a prepared bitmap. `quality` is thumbd's `q`, one scale for
    /// every lossy format (SPEC §17): `QualityScale` gives each encoder's
    /// settings for it. JPEG has no alpha: translucent pixels are
    /// composited over `background` (`bg`; white without one) first, as
    /// thumbor and imgproxy do. Past
    /// `deadline` the encoder stops at its next callback with `.renderTimedOut`
    /// (AVIF: only checked before it starts; libavif has no hook). JPEG XL
    /// writes the bitmap as it is: one frame, 8-bit sRGB, alpha kept.
    public static func encode(_ bitmap: Bitmap, format: OutputFormat, quality: Int, background: RGBAColor? = nil,
                              deadline: RenderDeadline = .none) throws(RenderError) -> EncodedThumbnail {
        let resolved = format.resolved(isOpaque: bitmap.isOpaque)
        let bytes: [UInt8]
        do {
            switch resolved {
            case .jpeg: bytes = try JPEGEncoder.encode(bitmap.flattened(onto: background ?? .white),
                                                       settings: QualityScale.jpeg(quality), deadline: deadline)
            case .png: bytes = try PNGEncoder.encode(bitmap, deadline: deadline)
            case .webp: bytes = try WebPEncoder.encode(bitmap, settings: QualityScale.webp(quality), deadline: deadline)
            case .avif: bytes = try AVIFEncoder.encode(bitmap, settings: QualityScale.avif(quality, pixels: bitmap.width * bitmap.height),
                                                       deadline: deadline)
            case .jxl: bytes = try JXLEncoder.encode(bitmap, settings: QualityScale.jxl(quality), deadline: deadline)
            case .rgba, .auto: bytes = bitmap.pixels
            }
        } catch .deadlineExceeded {
            throw .renderTimedOut
        } catch {
            throw .internalError("encoding \(resolved.rawValue) failed: \(error)")
        }
        return EncodedThumbnail(bytes: bytes, format: resolved, width: bitmap.width, height: bitmap.height)
    }
}

extension GeometryError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .noSide: "give w, h or a preset"
        case .needsBothSides(let fit): "fit=\(fit.rawValue) needs both w and h"
        }
    }
}
