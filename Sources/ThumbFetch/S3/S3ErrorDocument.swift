/// S3's error answers carry an XML document whose `<Code>` says why
/// (`SignatureDoesNotMatch`, `AccessDenied`, `NoSuchBucket`, …): the one
/// word an operator needs in the log to tell wrong credentials from a
/// missing permission. Read from the first bytes the fetcher keeps of an
/// error body (`THUMBD_MAX_ERROR_BODY`), never parsed as XML.
enum S3ErrorDocument {
    /// Longest code taken; S3's longest are about 40 characters.
    static let maxCodeLength = 64

    /// The text between the first `<Code>` and the `</Code>` after it, when it
    /// is a plain code (letters, digits, `.`); nil otherwise.
    static func code(in body: [UInt8]) -> String? {
        let open = Array("<Code>".utf8), close = Array("</Code>".utf8)
        guard let start = body.firstRange(of: open)?.upperBound,
              let end = body[start...].firstRange(of: close)?.lowerBound,
              (1...maxCodeLength).contains(end - start) else { return nil }
        let code = body[start..<end]
        guard code.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || (0x30...0x39).contains($0)
                                 || $0 == 0x2E }) else { return nil }
        return String(decoding: code, as: UTF8.self)
    }
}
