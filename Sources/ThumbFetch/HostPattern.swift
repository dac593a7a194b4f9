/// `origin.allowedHosts` matching (SourcesAndLimits.md): an entry is an exact host name,
/// or `*.example.com`, which matches subdomains of any depth but not the bare domain.
public enum HostPattern {
    /// True when `pattern` is a usable entry.
    public static func isValid(_ pattern: String) -> Bool {
        let name = pattern.hasPrefix("*.") ? String(pattern.dropFirst(2)) : pattern
        guard !name.isEmpty, name.count <= 253 else { return false }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.count <= 63 && label.utf8.allSatisfy { c in
                (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39) || c == 0x2D
                    || c == 0x5F || c == 0x3A || c == 0x5B || c == 0x5D
            }
        }
    }

    /// True when `host` is allowed by `patterns`; an empty list allows every host.
    /// Host names compare case-insensitively, a trailing dot ignored.
    public static func allows(_ host: String, patterns: [String]) -> Bool {
        guard !patterns.isEmpty else { return true }
        let h = normalized(host)
        return patterns.contains { pattern in
            if pattern.hasPrefix("*.") {
                let domain = normalized(String(pattern.dropFirst(2)))
                return h.hasSuffix("." + domain)
            }
            return h == normalized(pattern)
        }
    }

    private static func normalized(_ host: String) -> String {
        var h = host.lowercased()
        if h.hasSuffix(".") { h.removeLast() }
        return h
    }
}
