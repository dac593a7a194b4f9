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

    /// `p[range]` against `name`, both as contiguous bytes.
    static func equal(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ name: String) -> Bool {
        var name = name
        return name.withUTF8 { n in
            guard n.count == range.count else { return false }
            var i = 0
            while i < n.count {
                let a = p[range.lowerBound + i], b = n[i]
                if a != b {
                    let la = a >= 0x41 && a <= 0x5A ? a | 0x20 : a
                    let lb = b >= 0x41 && b <= 0x5A ? b | 0x20 : b
                    if la != lb { return false }
                }
                i += 1
            }
            return true
        }
    }

    /// `x` against a name spelled in lower case, as the parser's checks use.
    static func equal<C: Collection<UInt8>>(_ x: C, lowercase name: StaticString) -> Bool {
        guard x.count == name.utf8CodeUnitCount else { return false }
        let n = name.utf8Start
        var i = 0
        for c in x {
            if (c >= 0x41 && c <= 0x5A ? c | 0x20 : c) != n[i] { return false }
            i += 1
        }
        return true
    }
}
