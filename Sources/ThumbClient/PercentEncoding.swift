/// The one spelling of a source URL inside a query (API.md § /info, signing):
/// every byte outside RFC 3986's unreserved set (`A–Z a–z 0–9 - . _ ~`)
/// percent-encoded with upper-case hex. A client that builds every target
/// this way signs exactly what thumbd checks, and a `POST /info` item's
/// signature is the one of its `GET` form.
enum PercentEncoding {
    static func encode(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count * 3)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
