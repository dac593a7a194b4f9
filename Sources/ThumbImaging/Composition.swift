/// Where `cover` places its crop window and `contain` its image (API.md §
/// Composition). `attention` places the window on the original's focus.
public enum Gravity: String, Sendable, CaseIterable, Codable {
    case center, north, south, east, west, northeast, northwest, southeast, southwest, attention
}

/// A point of the oriented source as fractions of its width and height,
/// kept in thousandths (the three digits `fp` and `/info`'s `focus` allow),
/// so it is exact, hashable and spelled one way in keys.
public struct FocalPoint: Hashable, Sendable, Codable {
    /// 0…1000: thousandths of the width, from the left.
    public let x: Int
    /// 0…1000: thousandths of the height, from the top.
    public let y: Int

    public init(x: Int, y: Int) {
        precondition((0...1000).contains(x) && (0...1000).contains(y), "focal point outside 0…1000")
        self.x = x
        self.y = y
    }

    /// The nearest point in thousandths to fractions `x`, `y` (clamped to 0…1).
    public init(fractionX x: Double, fractionY y: Double) {
        func thousandths(_ v: Double) -> Int {
            guard v.isFinite else { return 500 }
            return Int((min(max(v, 0), 1) * 1000).rounded(.toNearestOrAwayFromZero))
        }
        self.init(x: thousandths(x), y: thousandths(y))
    }

    /// "0.42,0.37": three digits after the point, as `/info` writes it and keys spell it.
    public var description: String { Self.text(x) + "," + Self.text(y) }

    static func text(_ thousandths: Int) -> String {
        let digits = String(thousandths % 1000)
        return "\(thousandths / 1000)." + String(repeating: "0", count: 3 - digits.count) + digits
    }
}

/// An sRGB colour with straight alpha: `bg`'s value.
public struct RGBAColor: Hashable, Sendable, Codable {
    public var r: UInt8, g: UInt8, b: UInt8, a: UInt8

    public init(r: UInt8, g: UInt8, b: UInt8, a: UInt8 = 255) {
        self.r = r
        self.g = g
        self.b = b
        self.a = a
    }

    public static let white = RGBAColor(r: 255, g: 255, b: 255)
    public static let transparent = RGBAColor(r: 0, g: 0, b: 0, a: 0)

    /// `RRGGBB` or `RRGGBBAA`, hex digits of either case; nil for anything else.
    public init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count == 6 || digits.count == 8 else { return nil }
        var bytes: [UInt8] = []
        var i = 0
        while i < digits.count {
            guard let high = Self.nibble(digits[i]), let low = Self.nibble(digits[i + 1]) else { return nil }
            bytes.append(high << 4 | low)
            i += 2
        }
        self.init(r: bytes[0], g: bytes[1], b: bytes[2], a: bytes.count == 4 ? bytes[3] : 255)
    }

    /// Lower-case `rrggbb`, or `rrggbbaa` when not opaque: the key's spelling.
    public var hex: String {
        let parts = a == 255 ? [r, g, b] : [r, g, b, a]
        return parts.map { byte in
            let s = String(byte, radix: 16)
            return s.count == 1 ? "0" + s : s
        }.joined()
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }
}
