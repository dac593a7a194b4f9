import ThumbImaging

/// The geometry half of a thumbnail request: what the prepared bitmap depends on.
/// Two requests with equal `PreparedVariant`s share one decode and scale.
public struct PreparedVariant: Hashable, Sendable {
    public var width: Int?
    public var height: Int?
    public var fit: Fit
    public var enlarge: Bool

    public init(width: Int?, height: Int?, fit: Fit = .inside, enlarge: Bool = false) {
        self.width = width
        self.height = height
        self.fit = fit
        self.enlarge = enlarge
    }
}

/// A whole rendition: the prepared variant plus how it is encoded.
public struct ThumbnailVariant: Hashable, Sendable {
    public var prepared: PreparedVariant
    public var format: OutputFormat
    /// JPEG quality 1…100; part of the key only where it changes the bytes.
    public var quality: Int

    public init(prepared: PreparedVariant, format: OutputFormat, quality: Int) {
        self.prepared = prepared
        self.format = format
        self.quality = quality
    }

    /// A canonical, stable text form built from parsed values (never the raw
    /// query), used in cache keys and ETags.
    public var canonicalKey: String {
        let p = prepared
        let w = p.width.map(String.init) ?? "-"
        let h = p.height.map(String.init) ?? "-"
        // PNG and RGBA ignore quality, so it must not split their cache entries.
        let q = format.usesQuality ? String(quality) : "-"
        return "w=\(w)&h=\(h)&fit=\(p.fit.rawValue)&enlarge=\(p.enlarge ? 1 : 0)&format=\(format.rawValue)&q=\(q)"
    }
}
