/// `/info`'s object for one source (API.md § /info): what a list needs
/// before the thumbnail, to lay out, paint a placeholder and crop.
public struct ImageInfo: Decodable, Equatable, Sendable {
    public struct Focus: Decodable, Equatable, Sendable {
        public let x: Double, y: Double
    }

    /// The normalized source URL (absent for `thumbd info FILE`).
    public let url: String?
    public let format: String
    /// The oriented size.
    public let width: Int, height: Int
    public let orientation: Int
    public let hasAlpha: Bool
    public let animated: Bool
    public let frames: Int
    public let bytes: Int
    /// Standard base64 of the ThumbHash; `placeholder` decodes it.
    public let thumbhash: String
    /// `#rrggbb`.
    public let averageColor: String
    public let focus: Focus

    /// Width over height, for laying a row out before anything loads.
    public var aspectRatio: Double { Double(width) / Double(max(height, 1)) }
}
