import ThumbJSON
import ThumbService

/// A `POST /info` body (API.md § /info): `{"items": [{"url": "...", "sig": "..."}, ...]}`.
/// The form is all or nothing (a malformed body, an item without a string
/// `url`, an unknown field, too many items: `400`); what is wrong with one
/// item's URL or signature is that item's own error.
struct InfoBatch {
    struct Item {
        /// The `url` as given: an error item echoes it.
        let given: String
        let request: Result<InfoRequest, APIError>
    }

    let items: [Item]

    /// `signingKey`: when set, every item needs the `sig` of its GET form (`signedTarget`).
    init(body: [UInt8], maxItems: Int, signingKey: String?, reservedBucket: String? = nil) throws(ServiceError) {
        let list = try BatchBody.items(body, maxItems: maxItems, what: "info", limitName: "info.maxBatchItems")
        var items: [Item] = []
        items.reserveCapacity(list.count)
        for (index, value) in list.enumerated() {
            guard case .object(let fields) = value else { throw .badRequest("info item \(index) must be an object") }
            var url: String?, sig: String?
            for (name, field) in fields {
                switch (name, field) {
                case ("url", .string(let s)): url = s
                case ("sig", .string(let s)): sig = s
                case ("url", _), ("sig", _): throw .badRequest("info item \(index): '\(name)' must be a string")
                default: throw .badRequest("info item \(index): unknown field '\(name)'")
                }
            }
            guard let url else { throw .badRequest("info item \(index): missing 'url'") }
            items.append(Item(given: url, request: Self.request(url: url, sig: sig, signingKey: signingKey,
                                                                reservedBucket: reservedBucket)))
        }
        self.items = items
    }

    /// The item's request, or its own error: the signature first, as for a
    /// GET (an unsigned item learns nothing about its URL).
    private static func request(url: String, sig: String?, signingKey: String?,
                                reservedBucket: String?) -> Result<InfoRequest, APIError> {
        if let signingKey {
            let expected = URLSignature.sign(signedTarget(url: url), key: signingKey)
            guard let sig, ConstantTime.equals(Array(sig.utf8), Array(expected.utf8)) else {
                return .failure(.badSignature)
            }
        }
        return Result { () throws(ServiceError) in try InfoRequest(url: url, reservedBucket: reservedBucket) }
            .mapError(APIError.service)
    }

    /// What an item's `sig` signs: its GET form `/info?url=ENCODED`, every
    /// byte of the URL outside RFC 3986's unreserved set percent-encoded in
    /// upper-case hex. One spelling, so a client and thumbd agree on the bytes.
    static func signedTarget(url: String) -> String {
        var out = Array("/info?url=".utf8)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in url.utf8 {
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
