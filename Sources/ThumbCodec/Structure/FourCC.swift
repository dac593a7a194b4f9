/// An ISOBMFF four-character code (a box, item, reference or brand type) as
/// its big-endian 32-bit value, so that comparing two is one integer compare.
struct FourCC: Hashable, Sendable, CustomStringConvertible {
    let rawValue: UInt32

    init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `code` must be four ASCII characters (a literal in thumbd's own source).
    init(_ code: StaticString) {
        precondition(code.utf8CodeUnitCount == 4, "a four-character code has four characters")
        var value: UInt32 = 0
        code.withUTF8Buffer { for byte in $0 { value = value << 8 | UInt32(byte) } }
        rawValue = value
    }

    /// The code as text for error messages: printable ASCII as is, anything
    /// else as hex (the type of a hostile box can be any four bytes).
    var description: String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (24 - 8 * $0)) }
        guard bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return "0x" + String(rawValue, radix: 16) }
        return "'" + String(decoding: bytes, as: UTF8.self) + "'"
    }
}
