/// Feeds one decode to a render and to the original's canonical copy (its
/// facts, API.md § The focus and the original's facts) when both want the
/// same decode scale. When their box reductions also agree — the common case
/// for a small thumbnail of a large JPEG — the rows are converted and
/// reduced once and the canonical copy resamples the render's reduction,
/// which holds exactly the floats its own would (ThumbBench, 12 MP JPEG to a
/// 256-px cover: feeding both renderers added 20 % to the render, sharing
/// the reduction about a third of that); otherwise both renderers take the rows.
public struct CanonicalTee: ScanlineSink {
    public private(set) var render: ThumbnailRenderer
    private var canonical: ThumbnailRenderer
    private var sharesReduction = false

    public init(render: ThumbnailRenderer, canonical: ThumbnailRenderer) {
        self.render = render
        self.canonical = canonical
    }

    public mutating func begin(width: Int, height: Int, color: SourceColorSpace) {
        render.begin(width: width, height: height, color: color)
        sharesReduction = canonical.reducesLike(render, width: width, height: height)
        if !sharesReduction { canonical.begin(width: width, height: height, color: color) }
    }

    public mutating func consume(_ rows: UnsafeRawBufferPointer, rowCount: Int) {
        render.consume(rows, rowCount: rowCount)
        if !sharesReduction { canonical.consume(rows, rowCount: rowCount) }
    }

    /// The canonical copy, once every row arrived.
    public mutating func finishCanonical() -> Bitmap {
        if sharesReduction { canonical.adoptReduction(from: render) }
        return canonical.finish()
    }

    /// Places the render's `attention` window (after `finishCanonical` found the focus).
    public mutating func place(onFocus focus: FocalPoint) { render.place(onFocus: focus) }
}
