/// How a thumbnail fills its target box (API.md § Geometry).
public enum Fit: String, Sendable, CaseIterable {
    /// Fit inside the box, aspect kept, no padding.
    case inside
    /// Cover the box, aspect kept, centre-cropped to it.
    case cover
    /// Stretch to the box, aspect ignored.
    case fill
    /// Fit inside the box, then pad to exactly the box with the background.
    case contain
}

/// Why a box cannot be laid out.
public enum GeometryError: Error, Equatable, Sendable {
    /// Neither `w` nor `h` was given.
    case noSide
    /// `cover` and `fill` need both `w` and `h`.
    case needsBothSides(Fit)
}

/// The layout of one thumbnail, all in displayed (post-orientation) pixels:
/// the source is resampled to `scaledWidth`×`scaledHeight`, then the
/// `width`×`height` window at (`cropX`, `cropY`) is the result.
public struct ThumbnailGeometry: Equatable, Sendable {
    public let scaledWidth: Int
    public let scaledHeight: Int
    public let cropX: Int
    public let cropY: Int
    public let width: Int
    public let height: Int

    public init(scaledWidth: Int, scaledHeight: Int, cropX: Int = 0, cropY: Int = 0,
                width: Int, height: Int) {
        self.scaledWidth = scaledWidth
        self.scaledHeight = scaledHeight
        self.cropX = cropX
        self.cropY = cropY
        self.width = width
        self.height = height
    }

    /// Lays out a thumbnail of a `sourceWidth`×`sourceHeight` (displayed) image
    /// into the box `width`×`height` (either may be nil for `inside`).
    public init(sourceWidth sw: Int, sourceHeight sh: Int,
                width w: Int?, height h: Int?, fit: Fit, enlarge: Bool) throws(GeometryError) {
        precondition(sw > 0 && sh > 0, "source sides must be positive")
        switch fit {
        case .inside:
            let scales = [w.map { Double($0) / Double(sw) }, h.map { Double($0) / Double(sh) }]
                .compactMap { $0 }
            guard var scale = scales.min() else { throw .noSide }
            if !enlarge { scale = min(scale, 1) }
            let rw = Self.scaled(sw, scale), rh = Self.scaled(sh, scale)
            self.init(scaledWidth: rw, scaledHeight: rh, width: rw, height: rh)
        case .cover:
            guard let w, let h else { throw .needsBothSides(.cover) }
            var scale = max(Double(w) / Double(sw), Double(h) / Double(sh))
            if !enlarge { scale = min(scale, 1) }
            let scaledW = Self.scaled(sw, scale), scaledH = Self.scaled(sh, scale)
            let rw = min(w, scaledW), rh = min(h, scaledH)
            self.init(scaledWidth: scaledW, scaledHeight: scaledH,
                      cropX: (scaledW - rw) / 2, cropY: (scaledH - rh) / 2, width: rw, height: rh)
        case .fill:
            guard let w, let h else { throw .needsBothSides(.fill) }
            let rw = enlarge ? w : min(w, sw), rh = enlarge ? h : min(h, sh)
            self.init(scaledWidth: rw, scaledHeight: rh, width: rw, height: rh)
        case .contain:
            // Laid out by the composition work of issue 20, under way.
            throw .needsBothSides(.contain)
        }
    }

    /// round(side·scale), half away from zero, at least 1.
    private static func scaled(_ side: Int, _ scale: Double) -> Int {
        max(1, Int((Double(side) * scale).rounded(.toNearestOrAwayFromZero)))
    }
}
