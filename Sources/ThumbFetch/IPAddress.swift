import Glibc

/// An IPv4 or IPv6 address as raw bytes, the unit the SSRF rules judge.
public enum IPAddress: Hashable, Sendable, CustomStringConvertible {
    case v4(UInt32)                  // host byte order
    case v6([UInt8])                 // 16 bytes, network order

    /// Parses a literal ("10.0.0.1", "::ffff:127.0.0.1", "[::1]"); nil if it is not one.
    public init?(_ text: String) {
        var literal = text
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        var a4 = in_addr()
        if inet_pton(AF_INET, literal, &a4) == 1 {
            self = .v4(UInt32(bigEndian: a4.s_addr))
            return
        }
        var a6 = in6_addr()
        if inet_pton(AF_INET6, literal, &a6) == 1 {
            self = .v6(withUnsafeBytes(of: &a6) { Array($0) })
            return
        }
        return nil
    }

    /// Parses an IPv6 literal without brackets or zone ("::1", "::ffff:10.0.0.1"); nil otherwise.
    public init?(v6 text: String) {
        var a6 = in6_addr()
        guard inet_pton(AF_INET6, text, &a6) == 1 else { return nil }
        self = .v6(withUnsafeBytes(of: &a6) { Array($0) })
    }

    public var description: String {
        switch self {
        case .v4(let v):
            return "\(v >> 24).\(v >> 16 & 255).\(v >> 8 & 255).\(v & 255)"
        case .v6(let bytes):
            var a6 = in6_addr()
            withUnsafeMutableBytes(of: &a6) { $0.copyBytes(from: bytes) }
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            inet_ntop(AF_INET6, &a6, &buffer, socklen_t(buffer.count))
            return String(cString: buffer)
        }
    }
}
