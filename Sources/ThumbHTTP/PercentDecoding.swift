/// Percent-decoding of request targets (RFC 3986), strict: a `%` not followed
/// by two hex digits, or bytes that are not UTF-8 once decoded, are errors.
enum PercentDecoding {
    static func decode(_ bytes: ArraySlice<UInt8>, plusAsSpace: Bool) -> String? {
        // Most paths have nothing to decode: no scratch array then.
        if !bytes.contains(where: { $0 == UInt8(ascii: "%") || $0 >= 0x80 || (plusAsSpace && $0 == UInt8(ascii: "+")) }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let c = bytes[i]
            if c == UInt8(ascii: "%") {
                guard i + 2 < bytes.endIndex, let hi = hex(bytes[i + 1]), let lo = hex(bytes[i + 2]) else { return nil }
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(plusAsSpace && c == UInt8(ascii: "+") ? UInt8(ascii: " ") : c)
                i += 1
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hex(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }

    /// Splits `a=1&b=2` into decoded pairs; empty pieces are skipped.
    static func query(_ bytes: ArraySlice<UInt8>) -> [(name: String, value: String)]? {
        var pairs: [(name: String, value: String)] = []
        for piece in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let eq = piece.firstIndex(of: UInt8(ascii: "="))
            let rawName = eq.map { piece[piece.startIndex..<$0] } ?? piece[...]
            let rawValue = eq.map { piece[($0 + 1)...] } ?? []
            guard let name = decode(rawName, plusAsSpace: true), let value = decode(rawValue, plusAsSpace: true) else {
                return nil
            }
            pairs.append((name, value))
        }
        return pairs
    }

    /// Whether `query(bytes)` would succeed, without building anything:
    /// every `%` has two hex digits and the decoded bytes are UTF-8. Checking
    /// the whole decoded stream equals checking each name and value, since
    /// the raw `&` and `=` between them are ASCII and so never split a
    /// well-formed sequence.
    static func isValidQuery(_ bytes: ArraySlice<UInt8>) -> Bool {
        var utf8 = UTF8Check()
        var i = bytes.startIndex
        while i < bytes.endIndex {
            var c = bytes[i]
            if c == UInt8(ascii: "%") {
                guard i + 2 < bytes.endIndex, let hi = hex(bytes[i + 1]), let lo = hex(bytes[i + 2]) else { return false }
                c = hi << 4 | lo
                i += 3
            } else {
                i += 1
            }
            guard utf8.accept(c) else { return false }
        }
        return utf8.isComplete
    }

    /// UTF-8 well-formedness one byte at a time (Unicode Table 3-7): no
    /// overlong forms, surrogates or code points past U+10FFFF.
    struct UTF8Check {
        private var needed = 0
        private var low: UInt8 = 0x80
        private var high: UInt8 = 0xBF

        var isComplete: Bool { needed == 0 }

        mutating func accept(_ c: UInt8) -> Bool {
            if needed > 0 {
                guard c >= low && c <= high else { return false }
                low = 0x80
                high = 0xBF
                needed -= 1
                return true
            }
            switch c {
            case 0x00...0x7F: return true
            case 0xC2...0xDF: needed = 1
            case 0xE0: needed = 2; low = 0xA0
            case 0xE1...0xEC, 0xEE, 0xEF: needed = 2
            case 0xED: needed = 2; high = 0x9F
            case 0xF0: needed = 3; low = 0x90
            case 0xF1...0xF3: needed = 3
            case 0xF4: needed = 3; high = 0x8F
            default: return false
            }
            return true
        }
    }
}
