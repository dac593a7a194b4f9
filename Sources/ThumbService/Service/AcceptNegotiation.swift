import ThumbRender

/// `format=auto` against a request's `Accept` header: the first of
/// `output.autoFormats` whose media type the client lists with a non-zero
/// quality. Wildcards (`*/*`, `image/*`) do not count: browsers send them
/// on every image request, including ones that cannot decode AVIF.
///
/// The header is the whole list: repeated `Accept` fields come joined with
/// ", " (RFC 9110 §5.3, `HTTPRequest.combinedHeader`). A member whose weight
/// is malformed (`q=abc`, `q=1.5`, `q=`) is not acceptable: RFC 9110 §12.4.2
/// gives a weight no other form, and reading garbage as "acceptable" would
/// send a format the client never asked for.
public enum AcceptNegotiation {
    /// The negotiated format, or nil for the PNG/JPEG rule.
    public static func choose(from preferred: [OutputFormat], accept: String?) -> OutputFormat? {
        guard let accept, !preferred.isEmpty else { return nil }
        let listed = acceptedMediaTypes(accept)
        return preferred.first { format in listed.contains(format.contentType) }
    }

    /// The media types of an `Accept` value without wildcards, `q=0` or a
    /// malformed weight, lower-cased.
    static func acceptedMediaTypes(_ accept: String) -> Set<String> {
        var types: Set<String> = []
        for element in accept.split(separator: ",") {
            let parts = element.split(separator: ";")
            guard let type = parts.first?.trimmed.lowercased(), !type.isEmpty, !type.contains("*") else { continue }
            // The first `q` parameter is the weight; any after it are extensions.
            let weight = parts.dropFirst().lazy.compactMap { parameter -> Substring? in
                let pair = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard pair.count == 2, pair[0].trimmed.lowercased() == "q" else { return nil }
                return pair[1].trimmed
            }.first
            if let weight, (qvalue(weight) ?? 0) == 0 { continue }
            types.insert(type)
        }
        return types
    }

    /// RFC 9110 §12.4.2: `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`,
    /// in thousandths; nil when `text` is not one.
    static func qvalue(_ text: Substring) -> Int? {
        let bytes = Array(text.utf8)
        guard let first = bytes.first, first == UInt8(ascii: "0") || first == UInt8(ascii: "1") else { return nil }
        var thousandths = first == UInt8(ascii: "1") ? 1000 : 0
        guard bytes.count > 1 else { return thousandths }
        let fraction = bytes.dropFirst(2)
        guard bytes[1] == UInt8(ascii: "."), fraction.count <= 3,
              fraction.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        var scale = 100
        for digit in fraction {
            thousandths += Int(digit - 0x30) * scale
            scale /= 10
        }
        return thousandths <= 1000 ? thousandths : nil
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
