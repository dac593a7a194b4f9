/// What a view wants of one source: a box in points at a display scale, and
/// how to fill it (API.md § GET /thumbnail, § Composition). `ThumbURLBuilder`
/// turns it into the pixels and the URL thumbd serves.
public struct ThumbnailSpec: Hashable, Sendable {
    public enum Fit: String, Sendable { case inside, cover, fill, contain }
    public enum Format: String, Sendable { case auto, jpeg, png, webp, avif, jxl }
    /// `q`: a number 1…100 on thumbd's perceptual scale (a literal works:
    /// `quality: 70`), or `.auto`, the lowest q the server finds to reach its
    /// `output.autoQualityTarget` for each source and format (SwiftClient.md).
    public enum Quality: Hashable, Sendable, ExpressibleByIntegerLiteral {
        case value(Int)
        case auto

        public init(integerLiteral value: Int) { self = .value(value) }

        /// The query's spelling: the number, or `auto`.
        var parameter: String {
            switch self {
            case .value(let q): String(q)
            case .auto: "auto"
            }
        }
    }
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
    /// 1…100 or `.auto`; nil for the deployment's default.
    public var quality: Quality?
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
                fit: Fit = .inside, format: Format = .auto, quality: Quality? = nil, gravity: Gravity? = nil,
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
