extension JSONValue {
    /// The value as JSON text; `indent` > 0 pretty-prints with that many spaces.
    public func serialized(indent: Int = 0) -> String {
        var out = ""
        write(to: &out, indent: indent, level: 0)
        return out
    }

    private func write(to out: inout String, indent: Int, level: Int) {
        let newline = indent > 0 ? "\n" : ""
        let pad = String(repeating: " ", count: indent * (level + 1))
        let closePad = String(repeating: " ", count: indent * level)
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .integer(let v): out += String(v)
        case .number(let d):
            // JSON has no NaN or infinity; such a figure is a bug upstream, not worth invalid output.
            out += d.isFinite ? "\(d)" : "null"
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let items):
            guard !items.isEmpty else { out += "[]"; return }
            out += "[" + newline
            for (n, item) in items.enumerated() {
                out += pad
                item.write(to: &out, indent: indent, level: level + 1)
                out += (n + 1 < items.count ? "," : "") + newline
            }
            out += closePad + "]"
        case .object(let members):
            guard !members.isEmpty else { out += "{}"; return }
            out += "{" + newline
            for (n, member) in members.enumerated() {
                out += pad
                JSONValue.writeString(member.key, to: &out)
                out += indent > 0 ? ": " : ":"
                member.value.write(to: &out, indent: indent, level: level + 1)
                out += (n + 1 < members.count ? "," : "") + newline
            }
            out += closePad + "}"
        }
    }

    static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
