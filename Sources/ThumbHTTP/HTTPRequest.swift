/// A parsed HTTP/1.x request.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The request target exactly as sent (signatures cover these bytes).
    public var target: String
    /// The path, percent-decoded.
    public var path: String
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    public var body: [UInt8]

    /// A parsed request keeps its head's bytes and decodes fields and query
    /// on access (`ReceivedHead`); one built in code, or assigned to, keeps values.
    private enum Fields: Sendable {
        case received(ReceivedHead)
        case values(headers: [(name: String, value: String)], query: [(name: String, value: String)])
    }

    private var fields: Fields

    /// Query parameters in order, percent-decoded, `+` as space. Decoded
    /// again on every read of a parsed request: read it once per request.
    public var query: [(name: String, value: String)] {
        get {
            switch fields {
            case .received(let head): head.queryPairs
            case .values(_, let query): query
            }
        }
        set { fields = .values(headers: headers, query: newValue) }
    }

    /// Header fields in order; names as sent. Decoded again on every read of
    /// a parsed request: `header(_:)` finds one without building them all.
    public var headers: [(name: String, value: String)] {
        get {
            switch fields {
            case .received(let head): head.fields
            case .values(let headers, _): headers
            }
        }
        set { fields = .values(headers: newValue, query: query) }
    }

    public init(method: String, target: String, path: String, query: [(name: String, value: String)] = [],
                minorVersion: Int = 1, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.path = path
        self.minorVersion = minorVersion
        self.body = body
        fields = .values(headers: headers, query: query)
    }

    init(method: String, target: String, path: String, minorVersion: Int, head: ReceivedHead) {
        self.method = method
        self.target = target
        self.path = path
        self.minorVersion = minorVersion
        body = []
        fields = .received(head)
    }

    /// The first value of a header, names compared case-insensitively.
    public func header(_ name: String) -> String? {
        switch fields {
        case .received(let head): head.value(of: name)
        case .values(let headers, _): headers.first { HeaderName.equal($0.name, name) }?.value
        }
    }

    /// Every value of a header, names compared case-insensitively, joined
    /// in order with ", ": RFC 9110 §5.3 makes repeated fields of a list
    /// (`Accept`, `Cache-Control`, …) one list, so `Accept: image/png` then
    /// `Accept: image/webp` means `image/png, image/webp`. Not for fields
    /// that are no list (`Set-Cookie`, or a singleton like `Host`). Nil when absent.
    public func combinedHeader(_ name: String) -> String? {
        switch fields {
        case .received(let head): return head.combinedValue(of: name)
        case .values(let headers, _):
            let values = headers.filter { HeaderName.equal($0.name, name) }.map(\.value)
            return values.isEmpty ? nil : values.joined(separator: ", ")
        }
    }

    /// Whether the connection may carry another request after this one
    /// (HTTP/1.1 unless `Connection: close`; HTTP/1.0 only with `keep-alive`).
    public var keepAlive: Bool {
        let wanted = minorVersion == 0 ? "keep-alive" : "close"
        let listed: Bool
        switch fields {
        case .received(let head): listed = head.withValue(of: "Connection") { Self.lists($0, wanted) } ?? false
        case .values(let headers, _):
            listed = headers.first { HeaderName.equal($0.name, "Connection") }.map { Self.lists($0.value.utf8, wanted) } ?? false
        }
        return minorVersion == 0 ? listed : !listed
    }

    /// Whether a comma-separated list has `token` (ASCII case-insensitive)
    /// as an element; no array of elements is built.
    private static func lists<Bytes: BidirectionalCollection<UInt8>>(_ list: Bytes, _ token: String) -> Bool {
        func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 }
        var start = list.startIndex
        while true {
            let end = list[start...].firstIndex(of: UInt8(ascii: ",")) ?? list.endIndex
            var lo = start, hi = end
            while lo < hi, isSpace(list[lo]) { lo = list.index(after: lo) }
            while lo < hi, isSpace(list[list.index(before: hi)]) { hi = list.index(before: hi) }
            if HeaderName.equal(list[lo..<hi], token.utf8) { return true }
            if end == list.endIndex { return false }
            start = list.index(after: end)
        }
    }
}
