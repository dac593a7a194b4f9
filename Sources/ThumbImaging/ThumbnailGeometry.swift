/// How a thumbnail fills its target box (API.md § Geometry).
public enum Fit: String, Sendable, CaseIterable, Codable {
    /// Fit inside the box, aspect kept, no padding.
    case inside
    /// Cover the box, aspect kept, cropped to it (where: `gravity`, `fp`).
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
    /// `cover`, `fill` and `contain` need both `w` and `h`.
    case needsBothSides(Fit)
}

/// The layout of one thumbnail, all in displayed (post-orientation) pixels:
/// the source is resampled to `scaledWidth`×`scaledHeight`; the
/// `windowWidth`×`windowHeight` window at (`cropX`, `cropY`) of it is kept and
/// put at (`imageX`, `imageY`) of the `width`×`height` result.
///
/// Only `cover` crops (the window is smaller than the scaled image) and only
/// `contain` pads (the result is larger than the window, the rest is the
/// background); for `inside` and `fill` the window, the scaled image and the
/// result are one and the same.
public struct ThumbnailGeometry: Equatable, Sendable, Codable {
    /// Sides of the resampled image.
    public let scaledWidth: Int
    public let scaledHeight: Int
    /// The kept window's offset in the scaled image.
    public let cropX: Int
    public let cropY: Int
    /// Sides of the kept window: `width`×`height` except for `contain`, whose
    /// window is the whole scaled image.
    public let windowWidth: Int
    public let windowHeight: Int
    /// The window's offset on the result: (0, 0) except for `contain`.
    public let imageX: Int
    public let imageY: Int
    /// Sides of the result (for `contain`, the canvas: always the box).
    public let width: Int
    public let height: Int
    /// True for `cover` with `gravity=attention` until `placed(onFocus:)`:
    /// the window is centred meanwhile, and the original's focus must be
    /// known before the crop is final.
    public let needsFocus: Bool

    /// A layout given directly; the window defaults to the whole result.
    public init(scaledWidth: Int, scaledHeight: Int, cropX: Int = 0, cropY: Int = 0,
                width: Int, height: Int, windowWidth: Int? = nil, windowHeight: Int? = nil,
                imageX: Int = 0, imageY: Int = 0, needsFocus: Bool = false) {
        let ww = windowWidth ?? width, wh = windowHeight ?? height
        precondition(ww > 0 && wh > 0, "window sides must be positive")
        precondition(cropX >= 0 && cropY >= 0 && cropX + ww <= scaledWidth && cropY + wh <= scaledHeight,
                     "window outside the scaled image")
        precondition(imageX >= 0 && imageY >= 0 && imageX + ww <= width && imageY + wh <= height,
                     "window outside the result")
        self.scaledWidth = scaledWidth
        self.scaledHeight = scaledHeight
        self.cropX = cropX
        self.cropY = cropY
        self.windowWidth = ww
        self.windowHeight = wh
        self.imageX = imageX
        self.imageY = imageY
        self.width = width
        self.height = height
        self.needsFocus = needsFocus
    }

    /// Lays out a thumbnail of a `sourceWidth`×`sourceHeight` (displayed) image
    /// into the box `width`×`height` (either may be nil for `inside`).
    ///
    /// `gravity` (default `center`) places `cover`'s window and `contain`'s
    /// image; `focalPoint` places `cover`'s window and wins over `gravity`
    /// (a preset's gravity yields to a request's `fp`). Both are ignored where
    /// the SPEC ignores them or the parser refuses them: `fp` outside `cover`,
    /// gravity with `inside` and `fill`. `attention` lays `cover` out centred
    /// with `needsFocus` set, and `contain` out as `center`.
    public init(sourceWidth sw: Int, sourceHeight sh: Int, width w: Int?, height h: Int?,
                fit: Fit, enlarge: Bool, gravity: Gravity? = nil,
                focalPoint: FocalPoint? = nil) throws(GeometryError) {
        precondition(sw > 0 && sh > 0, "source sides must be positive")
        let gravity = gravity ?? .center
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
                      cropX: gravity.horizontal.offset(slack: scaledW - rw),
                      cropY: gravity.vertical.offset(slack: scaledH - rh),
                      width: rw, height: rh, needsFocus: gravity == .attention)
            if let focalPoint { self = placed(onFocus: focalPoint) }
        case .fill:
            guard let w, let h else { throw .needsBothSides(.fill) }
            let rw = enlarge ? w : min(w, sw), rh = enlarge ? h : min(h, sh)
            self.init(scaledWidth: rw, scaledHeight: rh, width: rw, height: rh)
        case .contain:
            guard let w, let h else { throw .needsBothSides(.contain) }
            var scale = min(Double(w) / Double(sw), Double(h) / Double(sh))
            if !enlarge { scale = min(scale, 1) }
            // scale ≤ w/sw and ≤ h/sh, so the rounded sides cannot pass the box;
            // the min keeps the canvas whole even if floating point thought otherwise.
            let rw = min(w, Self.scaled(sw, scale)), rh = min(h, Self.scaled(sh, scale))
            self.init(scaledWidth: rw, scaledHeight: rh, width: w, height: h,
                      windowWidth: rw, windowHeight: rh,
                      imageX: gravity.horizontal.offset(slack: w - rw),
                      imageY: gravity.vertical.offset(slack: h - rh))
        }
    }

    /// This layout with the window placed on `focus` (a point of the source, so
    /// of the scaled image) as `fp` places it (SPEC §3.4): the point as near
    /// the result's centre as the scaled image allows. It moves the window
    /// whatever gravity laid it out; call it when `needsFocus` says so. A window
    /// as large as the scaled image (every fit but `cover`) stays where it is.
    public func placed(onFocus focus: FocalPoint) -> ThumbnailGeometry {
        ThumbnailGeometry(scaledWidth: scaledWidth, scaledHeight: scaledHeight,
                          cropX: Placement.focused(thousandths: focus.x, room: scaledWidth, length: windowWidth),
                          cropY: Placement.focused(thousandths: focus.y, room: scaledHeight, length: windowHeight),
                          width: width, height: height, windowWidth: windowWidth, windowHeight: windowHeight,
                          imageX: imageX, imageY: imageY, needsFocus: false)
    }

    /// round(side·scale), half away from zero, at least 1.
    private static func scaled(_ side: Int, _ scale: Double) -> Int {
        max(1, Int((Double(side) * scale).rounded(.toNearestOrAwayFromZero)))
    }
}
