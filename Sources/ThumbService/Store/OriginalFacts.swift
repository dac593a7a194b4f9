import Foundation
import ThumbCodec
import ThumbHashFormat
import ThumbImaging
import ThumbJSON

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

    public init(sha256: String, format: ImageFormat, width: Int, height: Int, orientation: Int, hasAlpha: Bool,
                frames: Int, thumbhash: [UInt8], averageColor: String, focus: FocalPoint) {
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

    /// A GIF or WebP of two frames or more (AVIF/HEIF sequences report their primary image).
    public var animated: Bool { frames >= 2 && (format == .gif || format == .webp) }

    /// `thumbhash` as `/info` writes it: standard base64 with padding.
    public var thumbhashBase64: String { Data(thumbhash).base64EncodedString() }

    var json: JSONValue {
        .object([
            ("version", .integer(Self.version)),
            ("sha256", .string(sha256)),
            ("format", .string(format.rawValue)),
            ("width", .integer(width)),
            ("height", .integer(height)),
            ("orientation", .integer(orientation)),
            ("hasAlpha", .bool(hasAlpha)),
            ("frames", .integer(frames)),
            ("thumbhash", .string(thumbhashBase64)),
            ("averageColor", .string(averageColor)),
            ("focus", .array([.integer(focus.x), .integer(focus.y)])),
        ])
    }

    /// Nil for anything but facts of this version, whole and in range: a
    /// damaged or foreign file is computed again, never served.
    init?(json: JSONValue) {
        guard case .object(let members) = json else { return nil }
        var fields: [String: JSONValue] = [:]
        for (k, v) in members { fields[k] = v }
        guard case .integer(Self.version)? = fields["version"], case .string(let sha)? = fields["sha256"],
              case .string(let formatName)? = fields["format"], let format = ImageFormat(rawValue: formatName),
              case .integer(let width)? = fields["width"], width > 0,
              case .integer(let height)? = fields["height"], height > 0,
              case .integer(let orientation)? = fields["orientation"], (1...8).contains(orientation),
              case .bool(let hasAlpha)? = fields["hasAlpha"],
              case .integer(let frames)? = fields["frames"], frames >= 1,
              case .string(let hash)? = fields["thumbhash"], let thumbhash = Data(base64Encoded: hash).map(Array.init),
              ThumbHash.approximateAspectRatio(thumbhash) != nil,   // whole and well formed, without a decode
              case .string(let averageColor)? = fields["averageColor"], Self.isHexColor(averageColor),
              case .array(let point)? = fields["focus"], point.count == 2,
              case .integer(let x) = point[0], case .integer(let y) = point[1],
              (0...1000).contains(x), (0...1000).contains(y) else { return nil }
        self.init(sha256: sha, format: format, width: width, height: height, orientation: orientation,
                  hasAlpha: hasAlpha, frames: frames, thumbhash: thumbhash, averageColor: averageColor,
                  focus: FocalPoint(x: x, y: y))
    }

    private static func isHexColor(_ s: String) -> Bool {
        let u = Array(s.utf8)
        return u.count == 7 && u[0] == UInt8(ascii: "#")
            && u[1...].allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// The facts' file contents.
    var serialized: [UInt8] { Array(json.serialized().utf8) }

    /// Facts from a file's contents; nil when they do not parse.
    static func parse(_ bytes: [UInt8]) -> OriginalFacts? {
        (try? JSONParser.parse(bytes)).flatMap(OriginalFacts.init(json:))
    }
}
