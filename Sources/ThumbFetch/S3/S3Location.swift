/// An `s3://BUCKET/KEY` source (S3Sources.md): a bucket
/// name checked against S3's rules, and the object key, percent-decoded once.
///
/// A key is bytes, not a path: `a/../b` and `a//b` are keys of their own, so
/// nothing is removed or merged; only the percent-encoding is undone. Every
/// spelling of one object has one `normalized` URL (the bucket, then the key
/// S3-encoded), which the caches, the disk store and `DELETE /cache` share.
public struct S3Location: Equatable, Sendable {
    public let bucket: String
    /// The object key as S3 stores it: UTF-8, at most 1024 bytes.
    public let key: String

    /// S3's own limit on a key.
    public static let maxKeyBytes = 1024

    /// True when `text` names the `s3` scheme (in any case).
    public static func hasScheme(_ text: String) -> Bool {
        var bytes = text.utf8.makeIterator()
        for expected in "s3://".utf8 {
            guard let b = bytes.next(), b | (expected == 0x73 ? 0x20 : 0) == expected else { return false }
        }
        return true
    }

    /// Refuses, as `badURL` (a `400`), anything that is not `s3://BUCKET/KEY`
    /// with a valid bucket name and a non-empty key: `?` and `#` must be
    /// percent-encoded in a key, and a `%` must start an escape.
    public init(_ text: String) throws(FetchError) {
        guard Self.hasScheme(text) else { throw .badURL("url is not an s3:// URL") }
        let rest = text.utf8.dropFirst(5)
        guard !rest.contains(0x3F), !rest.contains(0x23) else {
            throw .badURL("an s3 URL has no query or fragment: encode ? and # in the key as %3F and %23")
        }
        guard let slash = rest.firstIndex(of: 0x2F) else { throw .badURL("an s3 URL is s3://BUCKET/KEY") }
        let bucket = String(decoding: rest[..<slash], as: UTF8.self)
        guard Self.isValidBucket(bucket) else {
            throw .badURL("'\(bucket)' is not a valid S3 bucket name")
        }
        guard let key = Self.percentDecoded(rest[rest.index(after: slash)...]) else {
            throw .badURL("the key of an s3 URL must be UTF-8 with valid percent-escapes")
        }
        guard !key.isEmpty else { throw .badURL("an s3 URL needs a key: s3://BUCKET/KEY") }
        guard key.utf8.count <= Self.maxKeyBytes else {
            throw .badURL("an S3 key is at most \(Self.maxKeyBytes) bytes")
        }
        self.bucket = bucket
        self.key = key
    }

    /// The bucket part of an `s3://` URL as written (up to the first `/`,
    /// `?` or `#`), whether or not it is a valid name.
    public static func bucketAsWritten(_ text: String) -> String {
        String(decoding: text.utf8.dropFirst(5).prefix { $0 != 0x2F && $0 != 0x3F && $0 != 0x23 }, as: UTF8.self)
    }

    /// An object thumbd names itself (the shared originals store): no
    /// spelling to undo, so nothing is decoded.
    package init(bucket: String, key: String) {
        self.bucket = bucket
        self.key = key
    }

    /// `s3://BUCKET/` and the key S3-encoded: the one spelling of this object.
    public var normalized: String { "s3://" + bucket + "/" + Self.encode(key: key) }

    /// S3's bucket naming rules (general purpose buckets): 3–63 characters of
    /// lower-case letters, digits, `.` and `-`, in dot-separated labels that
    /// start and end with a letter or digit; not an IPv4 address; none of the
    /// prefixes and suffixes S3 reserves.
    public static func isValidBucket(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (3...63).contains(bytes.count) else { return false }
        func alphanumeric(_ c: UInt8) -> Bool { (0x61...0x7A).contains(c) || (0x30...0x39).contains(c) }
        guard bytes.allSatisfy({ alphanumeric($0) || $0 == 0x2E || $0 == 0x2D }) else { return false }
        let labels = bytes.split(separator: 0x2E, omittingEmptySubsequences: false)
        guard labels.allSatisfy({ label in
            guard let first = label.first, let last = label.last else { return false }
            return alphanumeric(first) && alphanumeric(last)
        }) else { return false }
        if labels.count == 4 && labels.allSatisfy({ $0.allSatisfy { (0x30...0x39).contains($0) } }) { return false }
        for prefix in ["xn--", "sthree-", "amzn-s3-demo-"] where name.hasPrefix(prefix) { return false }
        for suffix in ["-s3alias", "--ol-s3", "--x-s3", "--table-s3", ".mrap"] where name.hasSuffix(suffix) { return false }
        return true
    }

    /// Every byte outside RFC 3986's unreserved set and `/` as `%XX` with
    /// upper-case hex: the spelling SigV4's canonical request uses, so the
    /// path libcurl signs is the path S3 checks (a raw `+`, `(` or a lower-case
    /// escape fails the signature at SeaweedFS and AWS alike).
    public static func encode(key: String) -> String {
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(key.utf8.count * 3)
        for c in key.utf8 {
            if (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || (0x30...0x39).contains(c)
                || c == 0x2D || c == 0x2E || c == 0x5F || c == 0x7E || c == 0x2F {
                out.append(c)
            } else {
                out += [0x25, hex[Int(c >> 4)], hex[Int(c & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `%XX` escapes decoded once (either case of hex); nil for a `%` that
    /// starts no escape, or bytes that are not UTF-8.
    static func percentDecoded(_ text: Substring.UTF8View) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        var i = text.startIndex
        while i < text.endIndex {
            let c = text[i]
            guard c == 0x25 else {
                out.append(c)
                i = text.index(after: i)
                continue
            }
            let h = text.index(after: i)
            guard h < text.endIndex, text.index(after: h) < text.endIndex,
                  let hi = URLNormalization.hexDigit(text[h]), let lo = URLNormalization.hexDigit(text[text.index(after: h)])
            else { return nil }
            out.append(hi << 4 | lo)
            i = text.index(h, offsetBy: 2)
        }
        return String(validating: out, as: UTF8.self)
    }
}
