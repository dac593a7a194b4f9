import Foundation

/// A source URL taken apart for fetching: only absolute `http`/`https` with a
/// host and no credentials (SPEC §3 `url`, §6).
public struct SourceURL: Equatable, Sendable {
    public let scheme: String
    /// Host name or IP literal, without brackets.
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
        guard var host = c.host, !host.isEmpty else { throw .badURL("url has no host") }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard host.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 }) else {
            throw .badURL("url host must be ASCII (use punycode)")
        }
        guard let port = UInt16(exactly: c.port ?? (scheme == "https" ? 443 : 80)), port > 0 else {
            throw .badURL("url has an invalid port")
        }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port
        let path = c.percentEncodedPath.isEmpty ? "/" : c.percentEncodedPath
        target = path + (c.percentEncodedQuery.map { "?" + $0 } ?? "")
        absolute = text
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

    /// A redirect's `Location`, resolved against this URL.
    func resolve(_ location: String) throws(FetchError) -> SourceURL {
        guard let base = URL(string: absolute), let next = URL(string: location, relativeTo: base)?.absoluteURL else {
            throw .origin("redirect to an invalid location")
        }
        return try SourceURL(next.absoluteString)
    }
}
