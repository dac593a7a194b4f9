import Foundation

/// A source URL taken apart for fetching: only absolute `http`/`https` with a
/// host and no credentials (API.md § GET /thumbnail `url`, SourcesAndLimits.md).
public struct SourceURL: Equatable, Sendable {
    public let scheme: String
    /// Host name (lower-cased) or IP address in its canonical text, without
    /// brackets: `http://127.1/` has host `127.0.0.1` (SourceHost).
    public let host: String
    public let port: UInt16
    /// Path and query as sent on the request line.
    public let target: String
    public let absolute: String

    public init(_ text: String) throws(FetchError) {
        guard let c = URLComponents(string: text), let scheme = c.scheme?.lowercased() else {
            throw .badURL("url is not an absolute URL")
        }
        guard scheme == "http" || scheme == "https" else {
            throw .forbidden("only http and https sources are allowed")
        }
        guard c.user == nil && c.password == nil else { throw .badURL("url must not carry credentials") }
        // Host and port as written: swift-corelibs-foundation's URLComponents
        // decodes a punycode host ("xn--bcher-kva" → "bücher"), and reads a
        // port too large for Int as no port at all (so the default one).
        guard let written = Self.authority(of: text), !written.host.isEmpty else { throw .badURL("url has no host") }
        // As a browser reads it: 127.1 is 127.0.0.1, which libcurl would
        // connect to (SourceHost).
        let host = try SourceHost(parsing: written.host)
        let defaultPort: UInt16 = scheme == "https" ? 443 : 80
        guard let port = written.port.isEmpty ? defaultPort : UInt16(written.port), port > 0 else {
            throw .badURL("url has an invalid port")
        }
        self.scheme = scheme
        self.host = host.text
        self.port = port
        let path = c.percentEncodedPath.isEmpty ? "/" : c.percentEncodedPath
        target = path + (c.percentEncodedQuery.map { "?" + $0 } ?? "")
        absolute = text
    }

    /// From parts already checked (an S3 object's address): nothing is parsed.
    init(checkedScheme scheme: String, host: String, port: UInt16, target: String, absolute: String) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.target = target
        self.absolute = absolute
    }

    /// Host (an IPv6 literal in its brackets, still percent-encoded) and
    /// port text of an absolute URL that URLComponents accepted without user info.
    private static func authority(of text: String) -> (host: Substring, port: Substring)? {
        guard let start = text.range(of: "://")?.upperBound else { return nil }
        var authority = text[start...]
        if let end = authority.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
            authority = authority[..<end]
        }
        guard !authority.contains("@") else { return nil }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            let rest = authority[authority.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { return nil }
            return (authority[...close], rest.dropFirst())
        }
        guard let colon = authority.firstIndex(of: ":") else { return (authority, "") }
        return (authority[..<colon], authority[authority.index(after: colon)...])
    }

    /// The `Host` header value.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (scheme == "https" ? 443 : 80) ? name : "\(name):\(port)"
    }

    /// The URL handed to libcurl, rebuilt from the checked parts (so both
    /// parsers see the same host; the C shim also compares them).
    var curlURL: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(name):\(port)\(target)"
    }

    /// A redirect's `Location`, resolved against this URL. One the client
    /// could not have asked for (no host, user info) is the origin's fault
    /// (SourcesAndLimits.md: `502 origin_error`); the source rules still refuse a scheme.
    package func resolve(_ location: String) throws(FetchError) -> SourceURL {
        guard let base = URL(string: absolute), let next = URL(string: location, relativeTo: base)?.absoluteURL else {
            throw .origin("redirect to an invalid location")
        }
        do {
            return try SourceURL(next.absoluteString)
        } catch .badURL(let reason) {
            throw .origin("redirect to an unusable location (\(reason))")
        }
    }
}
