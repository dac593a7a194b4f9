/// A request head as the parser checked it, kept as bytes: header fields
/// and query parameters are decoded only when asked for. A memory hit reads
/// two or three fields and no query, so building every field and parameter
/// as Strings up front cost about ten allocations per request for nothing.
struct ReceivedHead: Sendable {
    /// The head without its final empty line; lines end in LF or CRLF.
    let bytes: [UInt8]
    /// Where the first header line starts (after the request line).
    let fieldsStart: Int
    /// The raw query (after `?`, still percent-encoded); empty when none.
    let query: Range<Int>

    /// Calls `body` with each header line's name and value (optional
    /// whitespace around the value trimmed), in order, until it returns false.
    /// The parser validated every line, so each has a colon.
    func forEachField(_ body: (ArraySlice<UInt8>, ArraySlice<UInt8>) -> Bool) {
        Self.forEachLine(bytes[fieldsStart...]) { line in
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return true }
            return body(line[line.startIndex..<colon], Self.trimmed(line[(colon + 1)...]))
        }
    }

    /// The first value of header `name` (ASCII case-insensitive), undecoded.
    func valueBytes(of name: String) -> ArraySlice<UInt8>? {
        var found: ArraySlice<UInt8>?
        forEachField { fieldName, value in
            guard HeaderName.equal(fieldName, name.utf8) else { return true }
            found = value
            return false
        }
        return found
    }

    var fields: [(name: String, value: String)] {
        var out: [(name: String, value: String)] = []
        forEachField { name, value in
            out.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
            return true
        }
        return out
    }

    /// The query's pairs; the parser refused a query that does not decode.
    var queryPairs: [(name: String, value: String)] {
        PercentDecoding.query(bytes[query]) ?? []
    }

    /// Each non-empty line of `head` without its line end, until `body` returns false.
    static func forEachLine(_ head: ArraySlice<UInt8>, _ body: (ArraySlice<UInt8>) -> Bool) {
        var start = head.startIndex
        while start < head.endIndex {
            let end = head[start...].firstIndex(of: 0x0A) ?? head.endIndex
            var line = head[start..<end]
            if line.last == 0x0D { line = line.dropLast() }
            start = end + 1
            if line.isEmpty { continue }
            if !body(line) { return }
        }
    }

    /// Without leading and trailing spaces and tabs.
    static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var s = bytes
        while let c = s.first, c == 0x20 || c == 0x09 { s.removeFirst() }
        while let c = s.last, c == 0x20 || c == 0x09 { s.removeLast() }
        return s
    }
}
