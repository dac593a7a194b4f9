import Foundation
import ThumbCodec
import ThumbHashFormat
import ThumbImaging
import ThumbJSON
import ThumbRender

/// The facts' file format: what the disk store keeps
/// beside an original and the shared store in its sidecar. `/info`'s answer is
/// another shape, built by the API layer.
extension OriginalFacts {
    var json: JSONValue {
        var members: [(String, JSONValue)] = [
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
        ]
        // `autoQuality: {FORMAT: {"target": T, "table": V, "q": Q}}` (SPEC §17), when any was searched.
        if !autoQuality.isEmpty {
            members.append(("autoQuality", .object(autoQuality.map { c in
                (c.format.rawValue, .object([("target", .integer(c.target)), ("table", .integer(c.table)),
                                             ("q", .integer(c.q))]))
            })))
        }
        return .object(members)
    }

    /// The stored `autoQuality` entries that are whole and in range; any
    /// other entry is dropped (searched again), never the facts with it.
    static func autoQuality(_ value: JSONValue?) -> [AutoQuality.Choice] {
        guard case .object(let entries)? = value else { return [] }
        let choices = entries.compactMap { (name, entry) -> AutoQuality.Choice? in
            guard let format = OutputFormat(rawValue: name), format != .auto, format.usesQuality,
                  case .object(let members) = entry else { return nil }
            var fields: [String: JSONValue] = [:]
            for (k, v) in members { fields[k] = v }
            guard case .integer(let target)? = fields["target"], AutoQuality.targetRange.contains(target),
                  case .integer(let table)? = fields["table"], case .integer(let q)? = fields["q"],
                  (1...100).contains(q) else { return nil }
            return AutoQuality.Choice(format: format, target: target, table: table, q: q)
        }
        return AutoQuality.merged([], choices)
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
                  focus: FocalPoint(x: x, y: y), autoQuality: Self.autoQuality(fields["autoQuality"]))
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
