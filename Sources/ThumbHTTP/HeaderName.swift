/// Header field names compare case-insensitively (RFC 9110 §5.1). They are
/// ASCII tokens, so comparing bytes avoids two lowercased copies per lookup,
/// which requests and responses both do on every hit.
enum HeaderName {
    static func equal(_ a: String, _ b: String) -> Bool {
        equal(a.utf8, b.utf8)
    }

    /// Only A–Z fold; every other byte must match exactly.
    static func equal<A: Collection<UInt8>, B: Collection<UInt8>>(_ x: A, _ y: B) -> Bool {
        guard x.count == y.count else { return false }
        for (p, q) in zip(x, y) where p != q {
            let lp = p >= 0x41 && p <= 0x5A ? p | 0x20 : p
            let lq = q >= 0x41 && q <= 0x5A ? q | 0x20 : q
            if lp != lq { return false }
        }
        return true
    }
}
