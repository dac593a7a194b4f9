/// Why a JSON text was refused; `offset` is a byte offset into the input.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public let offset: Int
    public let reason: String
    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

/// A strict RFC 8259 parser (no comments, no trailing commas, no NaN) with a
/// nesting limit, so a hostile body cannot exhaust the stack.
public struct JSONParser {
    private let bytes: [UInt8]
    private var i = 0
    private let maxDepth: Int

    public static func parse(_ bytes: [UInt8], maxDepth: Int = 64) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
        parser.skipSpace()
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.i == bytes.count else { throw parser.error("trailing characters") }
        return value
    }

    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    private init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    private func error(_ reason: String) -> JSONParseError { JSONParseError(offset: i, reason: reason) }

    private mutating func skipSpace() {
        while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
    }

    private mutating func expect(_ literal: String, _ value: JSONValue) throws(JSONParseError) -> JSONValue {
        let lit = Array(literal.utf8)
        guard i + lit.count <= bytes.count, Array(bytes[i..<i + lit.count]) == lit else {
            throw error("unexpected character")
        }
        i += lit.count
        return value
    }

    private mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth < maxDepth else { throw error("nested too deeply") }
        guard i < bytes.count else { throw error("unexpected end") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        default: return try number()
        }
    }

    private mutating func object(depth: Int) throws(JSONParseError) -> JSONValue {
        i += 1
        var members: [(key: String, value: JSONValue)] = []
        var seen = Set<String>()
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw error("expected a key") }
            let key = try string()
            guard seen.insert(key).inserted else { throw error("duplicate key '\(key)'") }
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw error("expected ':'") }
            i += 1
            skipSpace()
            members.append((key, try value(depth: depth + 1)))
            skipSpace()
            guard i < bytes.count else { throw error("unexpected end") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            guard bytes[i] == UInt8(ascii: "}") else { throw error("expected ',' or '}'") }
            i += 1
            return .object(members)
        }
    }

    private mutating func array(depth: Int) throws(JSONParseError) -> JSONValue {
        i += 1
        var items: [JSONValue] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
        while true {
            skipSpace()
            items.append(try value(depth: depth + 1))
            skipSpace()
            guard i < bytes.count else { throw error("unexpected end") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            guard bytes[i] == UInt8(ascii: "]") else { throw error("expected ',' or ']'") }
            i += 1
            return .array(items)
        }
    }

    private mutating func string() throws(JSONParseError) -> String {
        i += 1
        var out: [UInt8] = []
        while i < bytes.count {
            let c = bytes[i]
            i += 1
            switch c {
            case UInt8(ascii: "\""):
                guard let s = String(validating: out, as: UTF8.self) else { throw error("invalid UTF-8") }
                return s
            case UInt8(ascii: "\\"):
                guard i < bytes.count else { throw error("unexpected end") }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"): out.append(contentsOf: try unicodeEscape())
                default: throw error("bad escape")
                }
            case 0..<0x20: throw error("control character in string")
            default: out.append(c)
            }
        }
        throw error("unterminated string")
    }

    private mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard i + 4 <= bytes.count else { throw error("short \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard let d = hexDigit(bytes[i]) else { throw error("bad \\u escape") }
            v = v << 4 | d
            i += 1
        }
        return v
    }

    private func hexDigit(_ c: UInt8) -> UInt32? {
        switch c {
        case 0x30...0x39: UInt32(c - 0x30)
        case 0x41...0x46: UInt32(c - 0x41 + 10)
        case 0x61...0x66: UInt32(c - 0x61 + 10)
        default: nil
        }
    }

    private mutating func unicodeEscape() throws(JSONParseError) -> [UInt8] {
        var scalar = try hex4()
        if (0xD800..<0xDC00).contains(scalar) {
            guard i + 2 <= bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                throw error("lone surrogate")
            }
            i += 2
            let low = try hex4()
            guard (0xDC00..<0xE000).contains(low) else { throw error("lone surrogate") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let u = Unicode.Scalar(scalar) else { throw error("lone surrogate") }
        return Array(String(Character(u)).utf8)
    }

    private mutating func number() throws(JSONParseError) -> JSONValue {
        let start = i
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < bytes.count, (0x30...0x39).contains(bytes[i]) else { throw error("unexpected character") }
        if bytes[i] == 0x30, i + 1 < bytes.count, (0x30...0x39).contains(bytes[i + 1]) {
            throw error("leading zero")
        }
        var isInteger = true
        while i < bytes.count, (0x30...0x39).contains(bytes[i]) { i += 1 }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            guard i < bytes.count, (0x30...0x39).contains(bytes[i]) else { throw error("bad fraction") }
            while i < bytes.count, (0x30...0x39).contains(bytes[i]) { i += 1 }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            isInteger = false
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard i < bytes.count, (0x30...0x39).contains(bytes[i]) else { throw error("bad exponent") }
            while i < bytes.count, (0x30...0x39).contains(bytes[i]) { i += 1 }
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        if isInteger, let v = Int(text) { return .integer(v) }
        guard let d = Double(text), d.isFinite else { throw error("number out of range") }
        return .number(d)
    }
}
