/// A source URL's host as a browser reads it (the WHATWG URL standard's host
/// parser, SourcesAndLimits.md § Hosts): a host whose last label is a
/// number is an IPv4 address in any of the spellings resolvers take —
/// `127.1`, `2130706433`, `0x7f.0.0.1`, `0177.0.0.1` all mean 127.0.0.1 —
/// and is judged, normalized and fetched as that address. Otherwise libcurl
/// and the resolver would read such a host as that address anyway, after
/// thumbd had taken it for a name.
///
/// Pure: tests feed it literals and nothing is looked up or connected to.
public enum SourceHost: Equatable, Sendable {
    /// A registered name, lower-cased.
    case name(String)
    case address(IPAddress)

    /// Parses a host as written in a URL: brackets around an IPv6 literal,
    /// percent-escapes not yet decoded. Throws `badURL` (a `400`) for a host
    /// no URL can have: a bracketed name (`[example]`), an IPv6 zone
    /// identifier (`[::1%25lo]`, which names an interface of this machine,
    /// never a remote source; browsers refuse it too), a number that is not
    /// an IPv4 address (`1.2.3.256`, `0x1g`), and non-ASCII or forbidden characters.
    public init(parsing written: Substring) throws(FetchError) {
        if written.hasPrefix("[") {
            guard written.count >= 2, written.hasSuffix("]") else { throw .badURL("url host has an unclosed '['") }
            let inner = written.dropFirst().dropLast()
            if inner.contains("%") {
                throw .badURL("url host: an IPv6 zone identifier names an interface of this machine, not a source")
            }
            guard let address = IPAddress(v6: String(inner)) else {
                throw .badURL("url host in brackets must be an IPv6 address")
            }
            self = .address(address)
            return
        }
        guard let decoded = Self.percentDecoded(written) else { throw .badURL("url host has a malformed %-escape") }
        guard !decoded.isEmpty else { throw .badURL("url has no host") }
        guard decoded.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw .badURL("url host must be ASCII (use punycode)") }
        guard !decoded.contains(where: Self.isForbidden) else {
            throw .badURL("url host has a character no host name can have")
        }
        let lower = String(decoding: decoded.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
        if Self.endsInANumber(lower) {
            guard let value = Self.ipv4(lower) else { throw .badURL("url host \(lower) is not a valid IPv4 address") }
            self = .address(.v4(value))
        } else {
            self = .name(lower)
        }
    }

    /// The host without brackets, as `SourceURL.host` keeps it: the name,
    /// dotted-decimal IPv4, or the IPv6 address in its canonical text.
    public var text: String {
        switch self {
        case .name(let name): name
        case .address(let address): address.description
        }
    }

    /// The host as a URL writes it: an IPv6 address in brackets.
    public var urlForm: String {
        switch self {
        case .address(.v6): "[\(text)]"
        default: text
        }
    }

    /// WHATWG "forbidden domain code points" left once controls, space and
    /// non-ASCII are refused. `:` never reaches here (it ends the host).
    private static func isForbidden(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "#"), UInt8(ascii: "%"), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "<"),
             UInt8(ascii: ">"), UInt8(ascii: "?"), UInt8(ascii: "@"), UInt8(ascii: "["), UInt8(ascii: "\\"),
             UInt8(ascii: "]"), UInt8(ascii: "^"), UInt8(ascii: "|"): true
        default: false
        }
    }

    /// `%XX` decoded; nil when an escape is malformed.
    private static func percentDecoded(_ s: Substring) -> [UInt8]? {
        let bytes = Array(s.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%") {
                guard i + 2 < bytes.count, let hi = URLNormalization.hexDigit(bytes[i + 1]),
                      let lo = URLNormalization.hexDigit(bytes[i + 2]) else {
                    return nil
                }
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return out
    }

    /// The labels, a trailing empty one (`127.0.0.1.`) dropped.
    private static func labels(_ host: String) -> [Substring] {
        var parts = host.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count > 1, parts.last?.isEmpty == true { parts.removeLast() }
        return parts
    }

    /// WHATWG's "ends in a number": the last label is all decimal digits, or
    /// parses as an IPv4 number (`0x…`). Such a host must be an IPv4 address.
    static func endsInANumber(_ host: String) -> Bool {
        guard let last = labels(host).last, !last.isEmpty else { return false }
        if last.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return true }
        return number(last) != nil
    }

    /// WHATWG's IPv4 parser: one to four numbers, each decimal, octal
    /// (leading `0`) or hex (`0x`); all but the last at most 255, the last
    /// filling the bytes left. Nil when the host is not one.
    static func ipv4(_ host: String) -> UInt32? {
        let parts = labels(host)
        guard (1...4).contains(parts.count) else { return nil }
        var numbers: [UInt64] = []
        for part in parts {
            guard let n = number(part) else { return nil }
            numbers.append(n)
        }
        guard numbers.dropLast().allSatisfy({ $0 <= 255 }) else { return nil }
        let last = numbers.removeLast()
        guard last < UInt64(1) << (8 * (5 - parts.count)) else { return nil }
        var value = last
        for (i, n) in numbers.enumerated() { value += n << (8 * (3 - i)) }
        return UInt32(value)
    }

    /// One IPv4 number: decimal, octal with a leading `0`, hex after `0x`
    /// (`0x` alone is 0). Nil when empty, malformed, or past 2³² (the value
    /// only has to be known to be too big).
    private static func number(_ text: Substring) -> UInt64? {
        var digits = text.utf8[...]
        var radix: UInt64 = 10
        if digits.count >= 2, digits.first == UInt8(ascii: "0"),
           digits.dropFirst().first == UInt8(ascii: "x") || digits.dropFirst().first == UInt8(ascii: "X") {
            digits = digits.dropFirst(2)
            radix = 16
            if digits.isEmpty { return 0 }
        } else if digits.count >= 2, digits.first == UInt8(ascii: "0") {
            digits = digits.dropFirst()
            radix = 8
        }
        guard !digits.isEmpty else { return nil }
        var value: UInt64 = 0
        for c in digits {
            guard let d = URLNormalization.hexDigit(c).map(UInt64.init), d < radix else { return nil }
            value = value * radix + d
            if value > UInt64(UInt32.max) + 1 { value = UInt64(UInt32.max) + 1 }
        }
        return value
    }
}
