import ThumbImaging

/// The geometry half of a thumbnail request: what the prepared bitmap depends on.
/// Two requests with equal `PreparedVariant`s share one decode and scale.
///
/// The composition fields (API.md § Composition) are nil when the request
/// and its preset do not give them, or give them where they are inert
/// (`gravity` with `inside` or `fill`): a nil field is absent from the key.
public struct PreparedVariant: Hashable, Sendable, Codable {
    public var width: Int?
    public var height: Int?
    public var fit: Fit
    public var enlarge: Bool
    /// Where `cover` crops and `contain` places; nil is `center`.
    public var gravity: Gravity?
    /// `fp`: where `cover` centres its window (never with `gravity`).
    public var focalPoint: FocalPoint?
    /// `contain`'s padding; nil is transparent. Only with `fit=contain`.
    public var background: RGBAColor?
    /// Gaussian blur sigma in tenths of a result pixel (`blur` times `dpr`, times 10).
    public var blurTenths: Int?
    /// Unsharp-mask sigma in tenths of a result pixel (`sharpen` times `dpr`, times 10).
    public var sharpenTenths: Int?

    public init(width: Int?, height: Int?, fit: Fit = .inside, enlarge: Bool = false, gravity: Gravity? = nil,
                focalPoint: FocalPoint? = nil, background: RGBAColor? = nil, blurTenths: Int? = nil,
                sharpenTenths: Int? = nil) {
        self.width = width
        self.height = height
        self.fit = fit
        self.enlarge = enlarge
        self.gravity = gravity
        self.focalPoint = focalPoint
        self.background = background
        self.blurTenths = blurTenths
        self.sharpenTenths = sharpenTenths
    }

    /// True when the render needs the original's focus (its facts).
    public var needsFocus: Bool { gravity == .attention && fit == .cover }
}

/// A whole rendition: the prepared variant plus how it is encoded.
public struct ThumbnailVariant: Hashable, Sendable {
    /// Bumped whenever a release changes the bytes of an existing variant
    /// (API.md § Output: part of every ETag). Round 3 made it 3; round 4
    /// made it 4 (0-ms WebP frames kept, `animated=1` out of the key), then
    /// 5 (one quality scale: every lossy encoder's settings changed), then 6
    /// (WebP at method 4 with sharp YUV, and its table recalibrated).
    public static let rendererVersion = 6

    public var prepared: PreparedVariant
    public var format: OutputFormat
    /// JPEG quality 1…100; part of the key only where it changes the bytes.
    public var quality: Int
    /// `bg` for flattening alpha when the result is JPEG (nil: white); nil
    /// where inert (`png`, `webp`, `avif`, `rgba`).
    public var background: RGBAColor?
    /// `false` when the request or its preset gave `animated=0`; nil
    /// otherwise — `animated=1` is the default's spelling (API.md § Output),
    /// so it shares the default's cache entries, flights and ETag. Only a
    /// WebP answer of an animated source animates (API.md § Animation); the
    /// key carries `animated=0` whenever given.
    public var animated: Bool?

    public init(prepared: PreparedVariant, format: OutputFormat, quality: Int, background: RGBAColor? = nil,
                animated: Bool? = nil) {
        self.prepared = prepared
        self.format = format
        self.quality = quality
        self.background = background
        self.animated = animated == false ? false : nil
    }

    /// Whether an animated source gives an animated answer: WebP (given,
    /// from a preset or negotiated), unless `animated=0`.
    public var animates: Bool { format == .webp && animated != false }

    /// What a JPEG's alpha is flattened onto (nil: white). `contain`'s
    /// canvas already holds `bg`: flattening onto it again would apply a
    /// translucent one twice, so that canvas goes over white.
    public var flattenBackground: RGBAColor? { prepared.fit == .contain ? nil : background }

    /// How a prepared bitmap of this variant becomes its rendition.
    public var encoding: EncodingSpec {
        EncodingSpec(format: format, quality: quality, background: flattenBackground)
    }

    /// A canonical, stable text form built from parsed values (never the raw
    /// query), used in cache keys and ETags. Composition fields appear only
    /// when set, so the keys of requests without them did not change.
    public var canonicalKey: String {
        let p = prepared
        let w = p.width.map(String.init) ?? "-"
        let h = p.height.map(String.init) ?? "-"
        // PNG and RGBA ignore quality, so it must not split their cache entries.
        let q = format.usesQuality ? String(quality) : "-"
        var key = "w=\(w)&h=\(h)&fit=\(p.fit.rawValue)&enlarge=\(p.enlarge ? 1 : 0)&format=\(format.rawValue)&q=\(q)"
        if let g = p.gravity { key += "&gravity=\(g.rawValue)" }
        if let fp = p.focalPoint { key += "&fp=\(fp.description)" }
        if let bg = background ?? p.background { key += "&bg=\(bg.hex)" }
        if let b = p.blurTenths { key += "&blur=\(b)" }
        if let s = p.sharpenTenths { key += "&sharpen=\(s)" }
        if animated == false { key += "&animated=0" }
        return key
    }
}
