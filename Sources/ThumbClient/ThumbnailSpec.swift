/// What a view wants of one source: a box in points at a display scale, and
/// how to fill it (API.md § GET /thumbnail, § Composition). `ThumbURLBuilder`
/// turns it into the pixels and the URL thumbd serves.
public struct ThumbnailSpec: Hashable, Sendable {
    public enum Fit: String, Sendable { case inside, cover, fill, contain }
    public enum Format: String, Sendable { case auto, jpeg, png, webp, avif, jxl }
    public enum Gravity: String, Sendable {
        case center, north, south, east, west, northeast, northwest, southeast, southwest, attention
    }

    /// The source, an absolute http(s) URL as the app knows it.
    public var source: String
    /// The view's size in points; nil leaves that side to the aspect ratio (`inside` only).
    public var width: Double?
    public var height: Double?
    /// Pixels per point (a screen's scale: 1, 2, 3, or a fraction).
    public var scale: Double
    public var fit: Fit
    public var format: Format
    /// 1…100; nil for the deployment's default.
    public var quality: Int?
    public var gravity: Gravity?
    /// `cover`'s window centred on this point (fractions of the image, 3 decimals kept).
    public var focalPoint: (x: Double, y: Double)? {
        get { focal.map { (Double($0.x) / 1000, Double($0.y) / 1000) } }
        set { focal = newValue.map { FocalThousandths(x: Self.thousandths($0.x), y: Self.thousandths($0.y)) } }
    }
    /// `contain`'s padding and what JPEG flattens alpha onto: `RRGGBB` or `RRGGBBAA`.
    public var background: String?
    /// Gaussian blur and unsharp-mask sigmas in points (sent in pixels; one decimal kept).
    public var blur: Double?
    public var sharpen: Double?
    public var enlarge: Bool

    struct FocalThousandths: Hashable, Sendable { let x: Int, y: Int }
    private var focal: FocalThousandths?

    public init(source: String, width: Double? = nil, height: Double? = nil, scale: Double = 1,
                fit: Fit = .inside, format: Format = .auto, quality: Int? = nil, gravity: Gravity? = nil,
                focalPoint: (x: Double, y: Double)? = nil, background: String? = nil, blur: Double? = nil,
                sharpen: Double? = nil, enlarge: Bool = false) {
        self.source = source
        self.width = width
        self.height = height
        self.scale = scale
        self.fit = fit
        self.format = format
        self.quality = quality
        self.gravity = gravity
        self.background = background
        self.blur = blur
        self.sharpen = sharpen
        self.enlarge = enlarge
        self.focalPoint = focalPoint
    }

    static func thousandths(_ v: Double) -> Int { Int((min(max(v, 0), 1) * 1000).rounded()) }
}
