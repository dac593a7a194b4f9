/// `format=auto` against a request's `Accept` header: the first of
/// `output.autoFormats` whose media type the client lists with a non-zero
/// quality. Wildcards (`*/*`, `image/*`) do not count: browsers send them
/// on every image request, including ones that cannot decode AVIF.
public enum AcceptNegotiation {
    /// The negotiated format, or nil for the PNG/JPEG rule.
    public static func choose(from preferred: [OutputFormat], accept: String?) -> OutputFormat? {
        guard let accept, !preferred.isEmpty else { return nil }
        let listed = acceptedMediaTypes(accept)
        return preferred.first { format in listed.contains(format.contentType) }
    }

    /// The media types of an `Accept` value without wildcards or `q=0`, lower-cased.
    static func acceptedMediaTypes(_ accept: String) -> Set<String> {
        var types: Set<String> = []
        for element in accept.split(separator: ",") {
            let parts = element.split(separator: ";")
            guard let type = parts.first?.trimmed.lowercased(), !type.isEmpty, !type.contains("*") else { continue }
            let refused = parts.dropFirst().contains { parameter in
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmed.lowercased() == "q" else { return false }
                return Double(pair[1].trimmed) == 0
            }
            if !refused { types.insert(type) }
        }
        return types
    }
}

private extension Substring {
    var trimmed: Substring {
        var s = self
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return s
    }
}
