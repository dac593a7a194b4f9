import Foundation

/// Builds thumbd's request targets (API.md § GET /thumbnail, § /info, § Signing):
/// points × scale become pixels, rounded up and snapped up to the deployment's
/// ladder; sent as points plus `dpr` for integer scales 1…4 (the box then
/// matches `allowedSizes`, which thumbd checks before `dpr`), as pixels
/// otherwise; the source percent-encoded the one way thumbd signs; `&sig=`
/// appended when the builder holds the key (a backend). An app without the
/// key sends the unsigned target to its backend to sign.
public struct ThumbURLBuilder: Sendable {
    /// thumbd's root, e.g. `https://thumbs.example` (targets are appended to it).
    public let baseURL: URL
    public let ladder: SizeLadder
    /// `security.signingKey`, on a backend only: never ship it in an app.
    public let signingKey: String?

    public init(baseURL: URL, ladder: SizeLadder = .any, signingKey: String? = nil) {
        self.baseURL = baseURL
        self.ladder = ladder
        self.signingKey = signingKey
    }

    /// The parameters a spec resolves to, before encoding.
    public struct Resolved: Equatable, Sendable {
        /// The box sent as `w`/`h` (points when `dpr` is set, else pixels); nil for a side left out.
        public let width: Int?, height: Int?
        /// 2…4, or nil for 1 or pixels.
        public let dpr: Int?
        public let preset: String?
        /// The pixels thumbd will make the box (`w`·`dpr` × `h`·`dpr`).
        public var pixelWidth: Int? { width.map { $0 * (dpr ?? 1) } }
        public var pixelHeight: Int? { height.map { $0 * (dpr ?? 1) } }
    }

    /// `/thumbnail?…` as thumbd will see it, signed when the builder holds the key.
    public func thumbnailTarget(_ spec: ThumbnailSpec) throws(ThumbClientError) -> String {
        let r = try resolve(spec)
        var query = "url=" + PercentEncoding.encode(try Self.checkedSource(spec.source))
        if let preset = r.preset { query += "&preset=" + PercentEncoding.encode(preset) }
        if r.preset == nil {
            if let w = r.width { query += "&w=\(w)" }
            if let h = r.height { query += "&h=\(h)" }
        }
        if let dpr = r.dpr { query += "&dpr=\(dpr)" }
        if spec.fit != .inside && r.preset == nil { query += "&fit=" + spec.fit.rawValue }
        if spec.enlarge { query += "&enlarge=1" }
        if spec.format != .auto { query += "&format=" + spec.format.rawValue }
        if let q = spec.quality {
            if case .value(let n) = q, !(1...100).contains(n) {
                throw .invalidRequest("quality \(n) is not in 1…100")
            }
            query += "&q=" + q.parameter
        }
        if let g = spec.gravity { query += "&gravity=" + g.rawValue }
        if let fp = spec.focalPoint {
            query += "&fp=" + Self.decimal(thousandths: ThumbnailSpec.thousandths(fp.x)) + "%2C"
                + Self.decimal(thousandths: ThumbnailSpec.thousandths(fp.y))
        }
        if let bg = spec.background { query += "&bg=" + PercentEncoding.encode(bg) }
        // Sigmas are in result pixels on the wire; with `dpr` thumbd multiplies them itself.
        let sigmaScale = r.dpr == nil ? spec.scale : 1
        if let blur = spec.blur { query += "&blur=" + Self.tenths(blur * sigmaScale) }
        if let sharpen = spec.sharpen { query += "&sharpen=" + Self.tenths(sharpen * sigmaScale) }
        return signed("/thumbnail?" + query)
    }

    public func thumbnailURL(_ spec: ThumbnailSpec) throws(ThumbClientError) -> URL {
        try url(thumbnailTarget(spec))
    }

    /// `/info?url=…` (signed when the builder holds the key).
    public func infoTarget(source: String) throws(ThumbClientError) -> String {
        signed("/info?url=" + PercentEncoding.encode(try Self.checkedSource(source)))
    }

    public func infoURL(source: String) throws(ThumbClientError) -> URL {
        try url(infoTarget(source: source))
    }

    /// A `POST /info` item's `sig`: the signature of its GET form; nil without a key.
    public func infoItemSignature(source: String) -> String? {
        signingKey.map { HMACSHA256.signature(of: "/info?url=" + PercentEncoding.encode(source), key: $0) }
    }

    /// `target` with `&sig=` when the builder holds the key.
    public func signed(_ target: String) -> String {
        guard let key = signingKey else { return target }
        return target + "&sig=" + HMACSHA256.signature(of: target, key: key)
    }

    func url(_ target: String) throws(ThumbClientError) -> URL {
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: base + target) else { throw .invalidRequest("not a URL: \(base + target)") }
        return url
    }

    /// `http`, `https` or (for a thumbd with an S3 store, S3Sources.md) `s3` URLs.
    static func checkedSource(_ source: String) throws(ThumbClientError) -> String {
        let lower = source.prefix(8).lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") || lower.hasPrefix("s3://") else {
            throw .invalidRequest("the source must be an absolute http, https or s3 URL: \(source)")
        }
        return source
    }

    /// `n` thousandths as thumbd's decimal (`0.42`, `1`, `0`).
    static func decimal(thousandths n: Int) -> String {
        if n % 1000 == 0 { return String(n / 1000) }
        var fraction = String(n % 1000)
        while fraction.count < 3 { fraction = "0" + fraction }
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(n / 1000).\(fraction)"
    }

    /// A sigma with one decimal at most (thumbd's spelling: `2`, `2.5`).
    static func tenths(_ v: Double) -> String {
        let t = Int((v * 10).rounded())
        return t % 10 == 0 ? String(t / 10) : "\(t / 10).\(t % 10)"
    }
}
