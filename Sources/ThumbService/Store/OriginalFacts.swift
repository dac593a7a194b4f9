import ThumbImaging
import ThumbJSON

/// What thumbd learns once about an original's pixels, from its canonical
/// decode (API.md § Composition; `/info` extends it): kept beside the
/// original on disk and in the memory cache, so renders after the first
/// reuse it instead of looking at the pixels again.
///
/// Facts belong to the bytes, not to the URL: `sha256` says which bytes, and
/// facts whose digest is not the original's current one are ignored (an
/// original found changed on revalidation gets new facts).
public struct OriginalFacts: Equatable, Sendable {
    /// Bumped when the canonical decode or anything computed from it changes,
    /// so facts stored by an older release are computed again.
    public static let version = 1

    /// Hex SHA-256 of the original these facts were computed from.
    public var sha256: String
    /// The `gravity=attention` point, in thousandths of the oriented width and height.
    public var focus: FocalPoint

    public init(sha256: String, focus: FocalPoint) {
        self.sha256 = sha256
        self.focus = focus
    }

    var json: JSONValue {
        .object([
            ("version", .integer(Self.version)),
            ("sha256", .string(sha256)),
            ("focus", .array([.integer(focus.x), .integer(focus.y)])),
        ])
    }

    /// Nil for anything but facts of this version, whole and in range.
    init?(json: JSONValue) {
        guard case .object(let members) = json else { return nil }
        var fields: [String: JSONValue] = [:]
        for (k, v) in members { fields[k] = v }
        guard case .integer(Self.version)? = fields["version"], case .string(let sha)? = fields["sha256"],
              case .array(let point)? = fields["focus"], point.count == 2,
              case .integer(let x) = point[0], case .integer(let y) = point[1],
              (0...1000).contains(x), (0...1000).contains(y) else { return nil }
        self.init(sha256: sha, focus: FocalPoint(x: x, y: y))
    }

    /// The facts' file contents.
    var serialized: [UInt8] { Array(json.serialized().utf8) }

    /// Facts from a file's contents; nil when they do not parse.
    static func parse(_ bytes: [UInt8]) -> OriginalFacts? {
        (try? JSONParser.parse(bytes)).flatMap(OriginalFacts.init(json:))
    }
}
