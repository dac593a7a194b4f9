/// Percent-decoding of request targets (RFC 3986), strict: a `%` not followed
/// by two hex digits, or bytes that are not UTF-8 once decoded, are errors.
enum PercentDecoding {
    static func decode(_ bytes: ArraySlice<UInt8>, plusAsSpace: Bool) -> String? {
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
}
