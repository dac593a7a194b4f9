import ThumbService
import ThumbJSON
import Foundation

/// Signed `/thumbnail` URLs (API.md § Signing): `&sig=` plus the unpadded base64url
/// HMAC-SHA256, keyed with `security.signingKey`, of the request target as
/// sent up to `&sig=`. The bytes as sent, not a re-encoding of the parsed
/// query, so what the client signed is exactly what is checked.
public enum URLSignature {
    static let marker = Array("&sig=".utf8)

    /// The signature of `signedPart` (what precedes `&sig=`).
    public static func sign(_ signedPart: String, key: String) -> String {
        base64url(Digest.hmacSHA256(key: Array(key.utf8), message: Array(signedPart.utf8)))
    }

    /// Whether `target` ends with a valid `&sig=`. `sig` must be the last
    /// parameter: anything after it would be unsigned, so it fails.
    public static func verify(target: String, key: String) -> Bool {
        let bytes = Array(target.utf8)
        guard let start = range(of: marker, in: bytes) else { return false }
        let given = bytes[(start + marker.count)...]
        let expected = Array(sign(String(decoding: bytes[..<start], as: UTF8.self), key: key).utf8)
        return ConstantTime.equals(given, expected)
    }

    static func base64url(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// First occurrence: a second `&sig=` would make the query a duplicate-parameter 400 anyway.
    private static func range(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
        }
        return nil
    }
}
