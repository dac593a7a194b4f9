import Foundation
#if canImport(CryptoKit)
import CryptoKit
#else
import CCrypto
#endif

/// HMAC-SHA256 for signed targets: CryptoKit on Apple platforms, libcrypto on
/// Linux (the package's `CCrypto`, a dependency only there).
enum HMACSHA256 {
    static func mac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        #if canImport(CryptoKit)
        Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
        #else
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        key.withUnsafeBufferPointer { k in
            message.withUnsafeBufferPointer { m in
                _ = HMAC(EVP_sha256(), k.baseAddress, Int32(k.count), m.baseAddress, m.count, &out, &length)
            }
        }
        return Array(out.prefix(Int(length)))
        #endif
    }

    /// The signature thumbd checks: unpadded base64url of the HMAC of `target`.
    static func signature(of target: String, key: String) -> String {
        var text = Data(mac(key: Array(key.utf8), message: Array(target.utf8))).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }
}
