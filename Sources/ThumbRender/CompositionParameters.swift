import ThumbImaging

/// The composition parameters of one request (API.md § Composition) as given —
/// by the query, a prefetch item, a preset or `thumbd thumbnail` — in CSS
/// units, before `dpr` multiplies them and before inert ones are dropped.
///
/// The spellings are parsed here once for every entry point, so a value the
/// query refuses is refused by the command line and the config file too, and
/// every error names its parameter with the same rule.
public struct CompositionParameters: Hashable, Sendable {
    public var gravity: Gravity?
    /// `fp`; never from a preset (it belongs to one source).
    public var focalPoint: FocalPoint?
    public var background: RGBAColor?
    /// `blur` in tenths of a CSS pixel, 3…1000.
    public var blurTenths: Int?
    /// `sharpen` in tenths of a CSS pixel, 3…100.
    public var sharpenTenths: Int?

    public init(gravity: Gravity? = nil, focalPoint: FocalPoint? = nil, background: RGBAColor? = nil,
                blurTenths: Int? = nil, sharpenTenths: Int? = nil) {
        self.gravity = gravity
        self.focalPoint = focalPoint
        self.background = background
        self.blurTenths = blurTenths
        self.sharpenTenths = sharpenTenths
    }

    /// `blur`: 0.3…100 CSS pixels, in tenths.
    public static let blurRange = 3...1000
    /// `sharpen`: 0.3…10 CSS pixels, in tenths.
    public static let sharpenRange = 3...100

    // What each value must be, for error messages ("gravity must be …").
    public static let gravityRule = orList(Gravity.allCases.map(\.rawValue))
    public static let focalPointRule = "X,Y with X and Y each 0, 1, or 0. or 1. followed by 1–3 digits, at most 1"
    public static let backgroundRule = "hex RRGGBB or RRGGBBAA"
    public static let blurRule = "a decimal 0.3…100 with at most one digit after the point"
    public static let sharpenRule = "a decimal 0.3…10 with at most one digit after the point"
    public static let fitRule = orList(Fit.allCases.map(\.rawValue))

    /// Reads `gravity`, `fp`, `bg`, `blur` and `sharpen` from decoded query
    /// values; a bad value is a `400` naming its parameter. Whether they go
    /// together (and with `fit`) is the caller's check: a preset joins first.
    public init(query values: [String: String]) throws(RenderError) {
        if let text = values["gravity"] {
            guard let value = Gravity(rawValue: text) else { throw .badRequest("gravity must be \(Self.gravityRule)") }
            gravity = value
        }
        if let text = values["fp"] {
            guard let value = Self.focalPoint(parsing: text) else { throw .badRequest("fp must be \(Self.focalPointRule)") }
            focalPoint = value
        }
        if let text = values["bg"] {
            guard let value = RGBAColor(hex: text) else { throw .badRequest("bg must be \(Self.backgroundRule)") }
            background = value
        }
        if let text = values["blur"] {
            guard let value = Self.tenths(parsing: text, in: Self.blurRange) else {
                throw .badRequest("blur must be \(Self.blurRule)")
            }
            blurTenths = value
        }
        if let text = values["sharpen"] {
            guard let value = Self.tenths(parsing: text, in: Self.sharpenRange) else {
                throw .badRequest("sharpen must be \(Self.sharpenRule)")
            }
            sharpenTenths = value
        }
    }

    /// `variant` (its fit and resolved format set) with these parameters in
    /// it, `blur` and `sharpen` multiplied by `dpr`, and none where the
    /// request alone makes them inert, so they cannot split the cache
    /// (API.md § Cache key): `gravity` only with `cover` and `contain`, `fp`
    /// only with `cover`, `bg` as padding only with `contain` and for
    /// flattening only when the result may be JPEG (`jpeg`, or `auto` not
    /// negotiated to WebP or AVIF).
    public func applied(to variant: ThumbnailVariant, dpr: Int = 1) -> ThumbnailVariant {
        var v = variant
        let fit = v.prepared.fit
        v.prepared.gravity = fit == .cover || fit == .contain ? gravity : nil
        v.prepared.focalPoint = fit == .cover ? focalPoint : nil
        v.prepared.background = fit == .contain ? background : nil
        v.background = v.format == .jpeg || v.format == .auto ? background : nil
        v.prepared.blurTenths = blurTenths.map { $0 * dpr }
        v.prepared.sharpenTenths = sharpenTenths.map { $0 * dpr }
        return v
    }

    /// `fp`'s `X,Y`: each coordinate exactly `0(\.\d{1,3})?|1(\.0{1,3})?`
    /// (no sign, space, exponent or leading `.`), so its value is exact in
    /// thousandths; nil for anything else.
    public static func focalPoint(parsing text: String) -> FocalPoint? {
        let parts = text.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard parts.count == 2, let x = thousandths(Array(parts[0])), let y = thousandths(Array(parts[1])) else {
            return nil
        }
        return FocalPoint(x: x, y: y)
    }

    private static func thousandths(_ bytes: [UInt8]) -> Int? {
        guard let first = bytes.first, first == UInt8(ascii: "0") || first == UInt8(ascii: "1") else { return nil }
        let whole = Int(first - UInt8(ascii: "0"))
        if bytes.count == 1 { return whole * 1000 }
        guard bytes.count <= 5, bytes[1] == UInt8(ascii: "."), bytes.count >= 3 else { return nil }
        var fraction = 0, scale = 100
        for digit in bytes[2...] {
            guard (0x30...0x39).contains(digit), whole == 0 || digit == UInt8(ascii: "0") else { return nil }
            fraction += Int(digit - 0x30) * scale
            scale /= 10
        }
        return whole * 1000 + fraction
    }

    /// A decimal with at most one digit after the point, in tenths, within
    /// `range`: digits, then optionally `.` and exactly one digit. No sign,
    /// space, exponent, leading zero (`05`), bare point (`5.`, `.5`) or
    /// second fractional digit (`2.50`): one value, few spellings.
    public static func tenths(parsing text: String, in range: ClosedRange<Int>) -> Int? {
        let bytes = Array(text.utf8)
        let point = bytes.firstIndex(of: UInt8(ascii: "."))
        let whole = bytes[..<(point ?? bytes.count)]
        guard (1...4).contains(whole.count), whole.allSatisfy({ (0x30...0x39).contains($0) }),
              whole.count == 1 || whole.first != UInt8(ascii: "0") else { return nil }
        var value = whole.reduce(0) { $0 * 10 + Int($1 - 0x30) } * 10
        if let point {
            guard bytes.count == point + 2, (0x30...0x39).contains(bytes[point + 1]) else { return nil }
            value += Int(bytes[point + 1] - 0x30)
        }
        return range.contains(value) ? value : nil
    }

    /// A JSON number (a prefetch item's or a preset's `blur`, `sharpen`) in
    /// tenths, when it is a whole number of tenths from 0 to 100 000; nil
    /// otherwise. JSON numbers are values, not spellings: `2.5`, `2.50` and
    /// `25e-1` are one number, `2.55` is refused.
    public static func tenths(of number: Double) -> Int? {
        guard number.isFinite, number >= 0, number <= 100_000 else { return nil }
        let tenths = (number * 10).rounded()
        // Division by 10 is correctly rounded, as the JSON parser's decimal
        // is: equal exactly when the number is that many tenths.
        guard tenths / 10 == number else { return nil }
        return Int(tenths)
    }

    /// Tenths as the query spells them: `25` is `2.5`, `30` is `3.0`.
    public static func text(tenths: Int) -> String { "\(tenths / 10).\(tenths % 10)" }

    /// "a, b or c".
    package static func orList(_ words: [String]) -> String {
        guard words.count > 1 else { return words.joined() }
        return words.dropLast().joined(separator: ", ") + " or " + words[words.count - 1]
    }
}
