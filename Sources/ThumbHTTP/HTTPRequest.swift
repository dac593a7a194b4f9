/// A parsed HTTP/1.x request.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The request target exactly as sent (signatures cover these bytes).
    public var target: String
    /// The path, percent-decoded.
    public var path: String
    /// Query parameters in order, percent-decoded, `+` as space.
    public var query: [(name: String, value: String)]
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    /// Header fields in order; names as sent.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(method: String, target: String, path: String, query: [(name: String, value: String)] = [],
                minorVersion: Int = 1, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.path = path
        self.query = query
        self.minorVersion = minorVersion
        self.headers = headers
        self.body = body
    }

    /// The first value of a header, names compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { HeaderName.equal($0.name, name) }?.value
    }

    /// Whether the connection may carry another request after this one
    /// (HTTP/1.1 unless `Connection: close`; HTTP/1.0 only with `keep-alive`).
    public var keepAlive: Bool {
        let tokens = (header("Connection") ?? "").lowercased().split(separator: ",")
            .map { $0.trimmingCharacters(in: " \t") }
        if minorVersion == 0 { return tokens.contains("keep-alive") }
        return !tokens.contains("close")
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> String {
        var s = self
        while let c = s.first, set.contains(c) { s.removeFirst() }
        while let c = s.last, set.contains(c) { s.removeLast() }
        return String(s)
    }
}
