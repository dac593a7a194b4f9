/// Why a source address is not a public unicast address (SourcesAndLimits.md).
public enum AddressClass: String, Sendable, Equatable {
    case `public`
    case loopback
    case `private`          // RFC 1918, CGNAT 100.64/10
    case linkLocal          // 169.254/16 (incl. cloud metadata), fe80::/10
    case multicast
    case unspecified
    case uniqueLocal        // fc00::/7
    case embeddedIPv4       // IPv4-mapped/-compatible, NAT64, 6to4, Teredo
    case reserved           // broadcast, 0/8, 240/4, benchmarking, documentation…
}

/// Classifies addresses for the SSRF rules. Pure: tests feed it literals and
/// never send traffic anywhere.
public enum AddressClassifier {
    public static func classify(_ address: IPAddress) -> AddressClass {
        switch address {
        case .v4(let v): classifyV4(v)
        case .v6(let b): classifyV6(b)
        }
    }

    /// True when thumbd may connect there with `origin.allowPrivateNetworks` false.
    public static func isPublic(_ address: IPAddress) -> Bool {
        classify(address) == .public
    }

    private static func inV4(_ v: UInt32, _ net: UInt32, _ bits: UInt32) -> Bool {
        let mask: UInt32 = bits == 0 ? 0 : ~UInt32(0) << (32 - bits)
        return v & mask == net & mask
    }

    private static func v4(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32) -> UInt32 {
        a << 24 | b << 16 | c << 8 | d
    }

    static func classifyV4(_ v: UInt32) -> AddressClass {
        if inV4(v, 0, 8) { return v == 0 ? .unspecified : .reserved }
        if inV4(v, v4(127, 0, 0, 0), 8) { return .loopback }
        if inV4(v, v4(10, 0, 0, 0), 8) || inV4(v, v4(172, 16, 0, 0), 12)
            || inV4(v, v4(192, 168, 0, 0), 16) || inV4(v, v4(100, 64, 0, 0), 10) { return .private }
        if inV4(v, v4(169, 254, 0, 0), 16) { return .linkLocal }
        if inV4(v, v4(224, 0, 0, 0), 4) { return .multicast }
        // 192.0.0/24 protocol assignments, documentation nets, 198.18/15 benchmarking,
        // 240/4 reserved and the broadcast address are never image hosts.
        let reserved: [(UInt32, UInt32)] = [
            (v4(192, 0, 0, 0), 24), (v4(192, 0, 2, 0), 24), (v4(198, 51, 100, 0), 24),
            (v4(203, 0, 113, 0), 24), (v4(198, 18, 0, 0), 15), (v4(240, 0, 0, 0), 4),
        ]
        if reserved.contains(where: { inV4(v, $0.0, $0.1) }) { return .reserved }
        return .public
    }

    private static func hasPrefix(_ b: [UInt8], _ prefix: [UInt8], bits: Int) -> Bool {
        for bit in 0..<bits {
            let byte = bit / 8, shift = 7 - bit % 8
            if (b[byte] >> shift) & 1 != (prefix[byte] >> shift) & 1 { return false }
        }
        return true
    }

    static func classifyV6(_ b: [UInt8]) -> AddressClass {
        precondition(b.count == 16)
        let zeros = [UInt8](repeating: 0, count: 16)
        if b == zeros { return .unspecified }
        if b == zeros.dropLast() + [1] { return .loopback }
        func p(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: 16 - bytes.count) }
        // ::ffff:0:0/96 mapped, ::/96 compatible, 64:ff9b::/96 and 64:ff9b:1::/48 NAT64,
        // 2002::/16 6to4, 2001::/32 Teredo: each carries an IPv4 address a gateway may reach.
        if hasPrefix(b, p([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]), bits: 96)
            || hasPrefix(b, zeros, bits: 96)
            || hasPrefix(b, p([0, 0x64, 0xFF, 0x9B]), bits: 96)
            || hasPrefix(b, p([0, 0x64, 0xFF, 0x9B, 0, 1]), bits: 48)
            || hasPrefix(b, p([0x20, 0x02]), bits: 16)
            || hasPrefix(b, p([0x20, 0x01, 0, 0]), bits: 32) { return .embeddedIPv4 }
        if hasPrefix(b, p([0xFE, 0x80]), bits: 10) { return .linkLocal }
        if hasPrefix(b, p([0xFC]), bits: 7) { return .uniqueLocal }
        if b[0] == 0xFF { return .multicast }
        // 2001:db8::/32 documentation, 100::/64 discard, fec0::/10 old site-local.
        if hasPrefix(b, p([0x20, 0x01, 0x0D, 0xB8]), bits: 32) || hasPrefix(b, p([0x01, 0]), bits: 64)
            || hasPrefix(b, p([0xFE, 0xC0]), bits: 10) { return .reserved }
        // Only global unicast (2000::/3) is public.
        return b[0] & 0xE0 == 0x20 ? .public : .reserved
    }
}
