/// The `format` parameter (API.md § Output).
public enum OutputFormat: String, Sendable, Hashable, CaseIterable, Codable {
    /// PNG when the prepared bitmap has any alpha below 255, else JPEG.
    case auto
    case jpeg
    case png
    /// Lossy WebP at quality `q`, alpha kept (lossless alpha plane).
    case webp
    /// 8-bit AVIF 4:2:0, alpha kept.
    case avif
    /// Lossy JPEG XL (libjxl, effort 5), 8-bit sRGB, alpha kept; the first
    /// frame of an animated source.
    case jxl
    /// The prepared bitmap itself: width·height·4 bytes, straight alpha.
    case rgba

    /// Whether quality changes the bytes (and so belongs in the cache key).
    public var usesQuality: Bool { self != .png && self != .rgba }

    /// The concrete format for a bitmap; never `.auto`.
    public func resolved(isOpaque: Bool) -> OutputFormat {
        self == .auto ? (isOpaque ? .jpeg : .png) : self
    }

    /// `Content-Type` of a resolved format.
    public var contentType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        case .avif: "image/avif"
        case .jxl: "image/jxl"
        case .rgba: "application/octet-stream"
        case .auto: preconditionFailure("resolve .auto before asking for its content type")
        }
    }
}
