/// A request head as the parser checked it, kept as bytes: header fields
/// and query parameters are decoded only when asked for. A memory hit reads
/// two or three fields and no query, so building every field and parameter
/// as Strings up front cost about ten allocations per request for nothing.
/// Lines are scanned through a buffer pointer, as positions: slicing the
/// array per line and per byte cost a retain and a bounds check each.
struct ReceivedHead: Sendable {
    typealias Bytes = UnsafeBufferPointer<UInt8>

    /// The head without its final empty line; lines end in LF or CRLF.
    let bytes: [UInt8]
    /// Where the first header line starts (after the request line).
    let fieldsStart: Int
    /// The raw query (after `?`, still percent-encoded); empty when none.
    let query: Range<Int>

    /// The first value of header `name` (ASCII case-insensitive), decoded.
    func value(of name: String) -> String? {
        bytes.withUnsafeBufferPointer { p in
            var found: String?
            Self.forEachField(p, from: fieldsStart) { field, value in
                guard HeaderName.equal(p, field, name) else { return true }
                found = String(decoding: p[value], as: UTF8.self)
                return false
            }
            return found
        }
    }

    /// Every value of header `name`, in order, joined with ", " (RFC 9110
    /// §5.3); nil when absent. One field is decoded as it is, with no join.
    func combinedValue(of name: String) -> String? {
        bytes.withUnsafeBufferPointer { p in
            var first: Range<Int>?
            var joined: [UInt8] = []
            Self.forEachField(p, from: fieldsStart) { field, value in
                guard HeaderName.equal(p, field, name) else { return true }
                guard let head = first else {
                    first = value
                    return true
                }
                if joined.isEmpty { joined.append(contentsOf: p[head]) }
                joined.append(contentsOf: ", ".utf8)
                joined.append(contentsOf: p[value])
                return true
            }
            guard let first else { return nil }
            return joined.isEmpty ? String(decoding: p[first], as: UTF8.self) : String(decoding: joined, as: UTF8.self)
        }
    }

    /// Whether header `name`'s first value satisfies `test`, without decoding it; nil when absent.
    func withValue<R>(of name: String, _ test: (Slice<Bytes>) -> R) -> R? {
        bytes.withUnsafeBufferPointer { p in
            var result: R?
            Self.forEachField(p, from: fieldsStart) { field, value in
                guard HeaderName.equal(p, field, name) else { return true }
                result = test(p[value])
                return false
            }
            return result
        }
    }

    var fields: [(name: String, value: String)] {
        bytes.withUnsafeBufferPointer { p in
            var out: [(name: String, value: String)] = []
            Self.forEachField(p, from: fieldsStart) { name, value in
                out.append((String(decoding: p[name], as: UTF8.self), String(decoding: p[value], as: UTF8.self)))
                return true
            }
            return out
        }
    }

    /// The query's pairs; the parser refused a query that does not decode.
    var queryPairs: [(name: String, value: String)] {
        PercentDecoding.query(bytes[query]) ?? []
    }

    /// Each header line's name and value (optional whitespace around the
    /// value trimmed), in order, until `body` returns false. A line without
    /// a colon is skipped; the parser refused any before keeping a head.
    static func forEachField(_ p: Bytes, from start: Int, _ body: (Range<Int>, Range<Int>) -> Bool) {
        forEachLine(p, from: start) { line in
            var colon = line.lowerBound
            while colon < line.upperBound && p[colon] != UInt8(ascii: ":") { colon += 1 }
            guard colon < line.upperBound else { return true }
            return body(line.lowerBound..<colon, trimmed(p, (colon + 1)..<line.upperBound))
        }
    }

    /// Each non-empty line from `start` on, without its line end, until `body` returns false.
    static func forEachLine(_ p: Bytes, from start: Int, _ body: (Range<Int>) -> Bool) {
        var lineStart = start
        while lineStart < p.count {
            var end = lineStart
            while end < p.count && p[end] != 0x0A { end += 1 }
            var lineEnd = end
            if lineEnd > lineStart && p[lineEnd - 1] == 0x0D { lineEnd -= 1 }
            let line = lineStart..<lineEnd
            lineStart = end + 1
            if line.isEmpty { continue }
            if !body(line) { return }
        }
    }

    /// `range` without leading and trailing spaces and tabs.
    static func trimmed(_ p: Bytes, _ range: Range<Int>) -> Range<Int> {
        var lo = range.lowerBound, hi = range.upperBound
        while lo < hi && (p[lo] == 0x20 || p[lo] == 0x09) { lo += 1 }
        while hi > lo && (p[hi - 1] == 0x20 || p[hi - 1] == 0x09) { hi -= 1 }
        return lo..<hi
    }

    /// `bytes` without leading and trailing spaces and tabs.
    static func trimmed<C: BidirectionalCollection<UInt8>>(_ bytes: C) -> C.SubSequence {
        var lo = bytes.startIndex, hi = bytes.endIndex
        while lo < hi && (bytes[lo] == 0x20 || bytes[lo] == 0x09) { lo = bytes.index(after: lo) }
        while hi > lo && (bytes[bytes.index(before: hi)] == 0x20 || bytes[bytes.index(before: hi)] == 0x09) { hi = bytes.index(before: hi) }
        return bytes[lo..<hi]
    }
}
