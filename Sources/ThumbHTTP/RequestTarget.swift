/// The request-target forms thumbd accepts (RFC 9112 §3.2): origin form
/// (`/path?query`) and absolute form (`http://host/path?query`, which proxies
/// send). Routing and signatures use the origin form either way.
enum RequestTarget {
    /// The target's path and query as sent: the target itself in origin form,
    /// the part after the authority in absolute form (`/` when that is empty
    /// or starts with `?`, as RFC 9112 §3.2.1 says). nil for a target that is
    /// neither, has bytes outside visible ASCII, or (absolute form) is not
    /// http/https, has no host, or carries userinfo.
    static func originForm(_ target: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard !target.isEmpty, target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        if target.first == UInt8(ascii: "/") { return target }
        guard let schemeEnd = schemeEnd(target) else { return nil }
        let authorityStart = schemeEnd + 3
        let rest = target[authorityStart...]
        let authorityEnd = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
            ?? target.endIndex
        guard isAuthority(target[authorityStart..<authorityEnd], allowEmpty: false) else { return nil }
        let pathAndQuery = target[authorityEnd...]
        if pathAndQuery.first == UInt8(ascii: "/") { return pathAndQuery }
        if pathAndQuery.isEmpty { return slash[...] }
        if pathAndQuery.first == UInt8(ascii: "?") { return (slash + pathAndQuery)[...] }
        return nil   // a fragment is never sent
    }

    private static let slash: [UInt8] = [UInt8(ascii: "/")]

    /// Where `http` or `https` (any case) ends, when followed by `://`.
    private static func schemeEnd(_ target: ArraySlice<UInt8>) -> Int? {
        for scheme in ["http", "https"] {
            let end = target.startIndex + scheme.utf8.count
            guard target.count > scheme.utf8.count + 3,
                  target[target.startIndex..<end].map({ $0 | 0x20 }).elementsEqual(scheme.utf8),
                  target[end..<(end + 3)].elementsEqual("://".utf8) else { continue }
            return end
        }
        return nil
    }

    /// `host[:port]` as a Host field value or an absolute target's authority:
    /// a reg-name, IPv4 or bracketed IPv6 literal, and digits after the colon.
    /// No userinfo (`@`), spaces, slashes or other delimiters.
    static func isAuthority<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes, allowEmpty: Bool) -> Bool {
        if bytes.isEmpty { return allowEmpty }
        var host = bytes[...]
        var port = bytes[bytes.endIndex...]
        if bytes.first == UInt8(ascii: "[") {
            let inside = bytes.index(after: bytes.startIndex)
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")), close > inside,
                  bytes[inside..<close].allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) else {
                return false
            }
            let after = bytes[bytes.index(after: close)...]
            if !after.isEmpty {
                guard after.first == UInt8(ascii: ":") else { return false }
                port = after.dropFirst()
            }
            host = bytes[bytes.endIndex...]
        } else if let colon = bytes.lastIndex(of: UInt8(ascii: ":")) {
            port = bytes[bytes.index(after: colon)...]
            host = bytes[..<colon]
            guard !host.isEmpty else { return false }
        }
        guard port.count <= 5, port.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return false }
        return host.allSatisfy(isRegNameByte)
    }

    private static func isHexDigit(_ c: UInt8) -> Bool {
        (0x30...0x39).contains(c) || (0x41...0x46).contains(c) || (0x61...0x66).contains(c)
    }

    /// unreserved, sub-delims and `%` (RFC 3986 reg-name); no `:` here, the port split it off.
    private static func isRegNameByte(_ c: UInt8) -> Bool {
        switch c {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "%"),
             UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
             UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
             UInt8(ascii: "="): true
        default: false
        }
    }
}
