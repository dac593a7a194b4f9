/// The `format` parameter (SPEC §3.2).
public enum OutputFormat: String, Sendable, Hashable, CaseIterable {
    /// PNG when the prepared bitmap has any alpha below 255, else JPEG.
    case auto
    case jpeg
    case png
    /// The prepared bitmap itself: width·height·4 bytes, straight alpha.
    case rgba

    /// The concrete format for a bitmap; never `.auto`.
    public func resolved(isOpaque: Bool) -> OutputFormat {
        self == .auto ? (isOpaque ? .jpeg : .png) : self
    }

    /// `Content-Type` of a resolved format.
    public var contentType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .rgba: "application/octet-stream"
        case .auto: preconditionFailure("resolve .auto before asking for its content type")
        }
    }
}
