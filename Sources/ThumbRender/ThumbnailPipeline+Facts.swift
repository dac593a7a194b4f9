import ThumbCodec
import ThumbHashFormat
import ThumbImaging

/// The canonical decode (API.md § Composition, `/info`): the first frame at
/// the smallest shrink-on-load scale whose long side is still ≥ 256 px,
/// oriented, in sRGB, scaled by thumbd's own scaler to ≤ 256 px on the long
/// side. An original's facts come from it and only from it, whichever route
/// asks first, so every instance computes the same facts.
extension ThumbnailPipeline {
    /// The long side of the canonical copy.
    public static let canonicalSide = 256

    /// The displayed size a decode must cover for the canonical copy: the long side ≥ 256.
    static func canonicalMinimum(_ header: ImageHeader) -> (width: Int, height: Int) {
        header.displayedWidth >= header.displayedHeight ? (canonicalSide, 1) : (1, canonicalSide)
    }

    /// A renderer that makes the canonical copy from a decode's rows.
    static func canonicalRenderer(_ header: ImageHeader) -> ThumbnailRenderer {
        let geometry: ThumbnailGeometry
        do {
            geometry = try ThumbnailGeometry(sourceWidth: header.displayedWidth, sourceHeight: header.displayedHeight,
                                             width: canonicalSide, height: canonicalSide, fit: .inside, enlarge: false)
        } catch {
            preconditionFailure("inside with both sides always lays out: \(error)")
        }
        return ThumbnailRenderer(geometry: geometry, orientation: header.orientation)
    }

    /// True when a render of `plan` decodes at the canonical scale, so one
    /// decode can feed both (`CanonicalTee`). Never when the render decodes
    /// an embedded thumbnail: the canonical decode is always of the primary
    /// image, so that facts never depend on a thumbnail.
    package static func sharesCanonicalDecode(_ plan: RenderPlan) -> Bool {
        !plan.usesEmbeddedThumbnail
            && ImageDecoder.scaleNumerator(header: plan.header, minimumDisplayedSize: plan.minimumDisplayedSize)
                == ImageDecoder.scaleNumerator(header: plan.header, minimumDisplayedSize: canonicalMinimum(plan.header))
    }

    /// Bytes the canonical copy needs besides a render that shares its
    /// decode: its box-reduced rows (at most 4·256 on a side before the
    /// kernel) as floats, and the copy itself.
    package static func canonicalScalerMemory(_ header: ImageHeader) -> Int {
        let side = 4 * canonicalSide
        return min(header.width * header.height, side * side) * 16 + canonicalSide * canonicalSide * 20
    }

    /// Bytes a canonical decode on its own needs at its peak.
    package static func canonicalDecodeMemory(_ header: ImageHeader, sourceBytes: Int) -> Int {
        sourceBytes + ImageDecoder.estimatedDecodeMemory(header: header, minimumDisplayedSize: canonicalMinimum(header))
            + canonicalScalerMemory(header)
    }

    /// The side of the copy `thumbhash` and `averageColor` come from (the
    /// most ThumbHash takes; more pixels only cost time).
    public static let placeholderSide = ThumbHash.maxSide

    /// The facts of a canonical copy: `focus` from the copy itself; the
    /// ThumbHash and average colour from it scaled by thumbd's own scaler to
    /// fit 100×100; size, orientation and frames from the header and the
    /// file's structure; `sawAlpha` from the decode's rows (`AlphaWatch`).
    static func facts(ofCanonical copy: Bitmap, header: ImageHeader, source: [UInt8], sawAlpha: Bool,
                      sha256: String) -> OriginalFacts {
        let small = placeholderCopy(copy)
        return OriginalFacts(sha256: sha256, format: header.format, width: header.displayedWidth,
                             height: header.displayedHeight, orientation: header.orientation.rawValue,
                             hasAlpha: sawAlpha, frames: FrameCount.of(source, format: header.format),
                             thumbhash: ThumbHash.encode(small), averageColor: AverageColor.hex(AverageColor.of(small)),
                             focus: Attention.focus(of: copy))
    }

    /// The canonical copy scaled to fit `placeholderSide` on both sides (itself when it fits).
    static func placeholderCopy(_ copy: Bitmap) -> Bitmap {
        guard copy.width > placeholderSide || copy.height > placeholderSide else { return copy }
        let geometry: ThumbnailGeometry
        do {
            geometry = try ThumbnailGeometry(sourceWidth: copy.width, sourceHeight: copy.height, width: placeholderSide,
                                             height: placeholderSide, fit: .inside, enlarge: false)
        } catch {
            preconditionFailure("inside with both sides always lays out: \(error)")
        }
        return ThumbnailRenderer.render(copy, orientation: .up, geometry: geometry)
    }

    /// An original's facts from a canonical decode of its own (when no
    /// render shares one, and for `/info`). Past `deadline` it stops with `.renderTimedOut`.
    public static func facts(source: [UInt8], header: ImageHeader, sha256: String,
                             deadline: RenderDeadline = .none) throws(RenderError) -> OriginalFacts {
        var watch = AlphaWatch(canonicalRenderer(header), watching: header.hasAlpha)
        do {
            try ImageDecoder.decode(source, header: header, minimumDisplayedSize: canonicalMinimum(header),
                                    deadline: deadline, into: &watch)
        } catch {
            throw RenderError(error)
        }
        if deadline.hasPassed { throw .renderTimedOut }
        return facts(ofCanonical: watch.sink.finish(), header: header, source: source, sawAlpha: watch.sawAlpha,
                     sha256: sha256)
    }

    /// The prepared bitmap of `plan` and the original's facts, computed on
    /// the way: from the render's own decode when it is at the canonical
    /// scale, else from a canonical decode first. An `attention` window is
    /// placed on the focus found.
    public static func prepareWithFacts(source: [UInt8], plan: RenderPlan, sha256: String,
                                        deadline: RenderDeadline = .none,
                                        tileThreads: Int = 1) throws(RenderError) -> (Bitmap, OriginalFacts) {
        guard sharesCanonicalDecode(plan) else {
            let facts = try facts(source: source, header: plan.header, sha256: sha256, deadline: deadline)
            return (try prepare(source: source, plan: plan.placed(onFocus: facts.focus), deadline: deadline,
                                tileThreads: tileThreads), facts)
        }
        var watch = AlphaWatch(CanonicalTee(render: renderer(for: plan), canonical: canonicalRenderer(plan.header)),
                               watching: plan.header.hasAlpha)
        do {
            try ImageDecoder.decode(source, header: plan.header, minimumDisplayedSize: plan.minimumDisplayedSize,
                                    deadline: deadline, tileThreads: tileThreads, into: &watch)
        } catch {
            throw RenderError(error)
        }
        var tee = watch.sink
        let facts = facts(ofCanonical: tee.finishCanonical(), header: plan.header, source: source,
                          sawAlpha: watch.sawAlpha, sha256: sha256)
        tee.place(onFocus: facts.focus)
        let bitmap = tee.render.finish()
        if deadline.hasPassed { throw .renderTimedOut }
        return (bitmap, facts)
    }
}
