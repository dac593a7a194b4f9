/// The normalized form of a source URL (RFC 3986 §6.2.2–6.2.3): scheme and
/// host lower-cased, percent-encoding hex upper-cased and unreserved
/// characters decoded, dot segments removed, an empty path as `/`, a default
/// or empty port dropped, the fragment dropped; the query kept byte for byte
/// (origins may treat its spelling as significant). Every spelling of one
/// source shares its original, its variants and its purge. An `s3://` URL
/// has its own form (`S3Location.normalized`): its path is a key, in which
/// dot segments are names, not steps.
public enum URLNormalization {
    /// The normalized URL, or nil when `text` is not `scheme://authority…`
    /// (or an `s3://` URL that is not `s3://BUCKET/KEY`).
    public static func normalize(_ text: String) -> String? {
        if S3Location.hasScheme(text) { return (try? S3Location(text))?.normalized }
        var rest = Substring(text)
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        guard let colon = rest.firstIndex(of: ":"), rest[colon...].hasPrefix("://") else { return nil }
        let scheme = rest[..<colon].lowercased()
        guard !scheme.isEmpty else { return nil }
        rest = rest[rest.index(colon, offsetBy: 3)...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        rest = rest[authorityEnd...]
        var query: Substring?
        if let q = rest.firstIndex(of: "?") {
            query = rest[q...]
            rest = rest[..<q]
        }
        // Userinfo stays (the fetcher refuses it); only host and port change.
        var userinfo = ""
        if let at = authority.lastIndex(of: "@") {
            userinfo = String(authority[...at])
            authority = authority[authority.index(after: at)...]
        }
        var host = authority, port: Substring = ""
        let portColon = authority.hasPrefix("[") ? authority.lastIndex(of: "]").flatMap { close in
            authority[close...].firstIndex(of: ":")
        } : authority.lastIndex(of: ":")
        if let portColon {
            host = authority[..<portColon]
            port = authority[authority.index(after: portColon)...]
        }
        let defaultPort = scheme == "http" ? "80" : scheme == "https" ? "443" : nil
        var portText = ""
        if !port.isEmpty {
            let digits = port.drop { $0 == "0" }
            portText = digits == Substring(defaultPort ?? "") ? "" : ":" + (digits.isEmpty ? "0" : String(digits))
        }
        let path = removeDotSegments(normalizePercentEncoding(rest))
        // An IP address in any spelling becomes its canonical text, so
        // `127.1` and `127.0.0.1` are one source (and the one address the
        // source rules judge); a host that does not parse stays as written
        // for `SourceURL` to refuse.
        let canonicalHost = (try? SourceHost(parsing: host))?.urlForm ?? normalizePercentEncoding(host).lowercased()
        return assemble([scheme, "://", userinfo, canonicalHost, portText, path.isEmpty ? "/" : path,
                         query.map(String.init) ?? ""])
    }

    /// The pieces in one buffer made to measure: caches keep normalized URLs
    /// and count their bytes, and a chain of `+` can leave a string holding
    /// up to twice the storage its text needs (each append grows by doubling).
    private static func assemble(_ pieces: [String]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(pieces.reduce(0) { $0 + $1.utf8.count })
        for piece in pieces { bytes.append(contentsOf: piece.utf8) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The host of a normalized URL (brackets kept off an IPv6 literal), or nil.
    /// Cheap enough for every request: no URL parser.
    public static func host(ofNormalized url: String) -> Substring? {
        guard let start = url.range(of: "://")?.upperBound else { return nil }
        var authority = url[start...]
        if let end = authority.firstIndex(where: { $0 == "/" || $0 == "?" }) { authority = authority[..<end] }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            return authority[authority.index(after: authority.startIndex)..<close]
        }
        if let colon = authority.firstIndex(of: ":") { authority = authority[..<colon] }
        return authority
    }

    /// `%7e` → `~`, `%2f` → `%2F`: unreserved characters decoded, hex upper-cased.
    static func normalizePercentEncoding(_ s: Substring) -> String {
        let bytes = Array(s.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0x25, i + 2 < bytes.count, let hi = hexDigit(bytes[i + 1]), let lo = hexDigit(bytes[i + 2]) {
                let value = hi << 4 | lo
                if isUnreserved(value) {
                    out.append(value)
                } else {
                    out += [0x25, upperHex(bytes[i + 1]), upperHex(bytes[i + 2])]
                }
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// RFC 3986 §5.2.4.
    static func removeDotSegments(_ path: String) -> String {
        var input = Substring(path)
        var output: [Substring] = []
        while !input.isEmpty {
            if input.hasPrefix("../") { input = input.dropFirst(3) }
            else if input.hasPrefix("./") { input = input.dropFirst(2) }
            else if input.hasPrefix("/./") { input = input.dropFirst(2) }
            else if input == "/." { input = "/" }
            else if input.hasPrefix("/../") { input = input.dropFirst(3); _ = output.popLast() }
            else if input == "/.." { input = "/"; _ = output.popLast() }
            else if input == "." || input == ".." { input = "" }
            else {
                let start = input.hasPrefix("/") ? input.index(after: input.startIndex) : input.startIndex
                let end = input[start...].firstIndex(of: "/") ?? input.endIndex
                output.append(input[..<end])
                input = input[end...]
            }
        }
        return output.joined()
    }

    /// The value of one hex digit (either case), nil for any other byte.
    static func hexDigit(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }

    private static func upperHex(_ c: UInt8) -> UInt8 { (0x61...0x66).contains(c) ? c - 0x20 : c }

    private static func isUnreserved(_ c: UInt8) -> Bool {
        (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || (0x30...0x39).contains(c)
            || c == 0x2D || c == 0x2E || c == 0x5F || c == 0x7E
    }
}
