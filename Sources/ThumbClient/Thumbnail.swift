import Foundation

/// A thumbnail as thumbd answered it, with what revalidation needs.
public struct Thumbnail: Sendable {
    public let bytes: Data
    public let contentType: String
    /// Strong; sent back as `If-None-Match`.
    public let etag: String?
    public let width: Int?, height: Int?
    /// Where thumbd found it (`X-Cache`: `memory`, `disk`, `origin`).
    public let serverCache: String?
    /// True when thumbd answered `304` and these are the bytes kept from before.
    public let revalidated: Bool
}
