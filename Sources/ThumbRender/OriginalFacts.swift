import Foundation
import ThumbCodec
import ThumbHashFormat
import ThumbImaging

/// What thumbd learns once about an original's pixels, from its canonical
/// decode (API.md § /info): kept beside the original on disk and in the
/// memory cache, so `/info` and the renders after the first reuse it instead
/// of looking at the pixels again.
///
/// Facts belong to the bytes, not to the URL: `sha256` says which bytes, and
/// facts whose digest is not the original's current one are ignored (an
/// original found changed on revalidation gets new facts).
public struct OriginalFacts: Equatable, Sendable, Codable {
    /// Bumped when the canonical decode or anything computed from it changes,
    /// so facts stored by an older release are computed again. It is part of
    /// `/info`'s ETag: new facts, new ETag.
    public static let version = 2

    /// Hex SHA-256 of the original these facts were computed from.
    public var sha256: String
    public var format: ImageFormat
    /// The oriented size (`sw`×`sh` of API.md § Geometry).
    public var width: Int
    public var height: Int
    /// The EXIF orientation applied (1 when none; always 1 for HEIF/AVIF).
    public var orientation: Int
    /// Whether any pixel of the canonical decode has alpha below 255.
    public var hasAlpha: Bool
    /// The source's frame count, from its block structure.
    public var frames: Int
    /// The ThumbHash of the ≤ 100×100 copy.
    public var thumbhash: [UInt8]
    /// The alpha-weighted mean colour of the ≤ 100×100 copy, `#rrggbb`.
    public var averageColor: String
    /// The `gravity=attention` point, in thousandths of the oriented width and height.
    public var focus: FocalPoint
    /// `q=auto`'s results for this original (SPEC §17), one per lossy
    /// format at most, in `OutputFormat` order: kept with the facts, used
    /// only for the same target and table version. Not part of `version`
    /// nor of `/info`: a search adds them to facts already kept.
    public var autoQuality: [AutoQuality.Choice]

    public init(sha256: String, format: ImageFormat, width: Int, height: Int, orientation: Int, hasAlpha: Bool,
                frames: Int, thumbhash: [UInt8], averageColor: String, focus: FocalPoint,
                autoQuality: [AutoQuality.Choice] = []) {
        self.autoQuality = autoQuality
        self.sha256 = sha256
        self.format = format
        self.width = width
        self.height = height
        self.orientation = orientation
        self.hasAlpha = hasAlpha
        self.frames = frames
        self.thumbhash = thumbhash
        self.averageColor = averageColor
        self.focus = focus
    }

    /// A GIF, WebP or JPEG XL of two frames or more (AVIF/HEIF sequences
    /// report their primary image). A JPEG XL animation still renders its
    /// first frame only (API.md § Animation).
    public var animated: Bool { frames >= 2 && (format == .gif || format == .webp || format == .jxl) }

    /// `thumbhash` as `/info` writes it: standard base64 with padding.
    public var thumbhashBase64: String { Data(thumbhash).base64EncodedString() }
}
