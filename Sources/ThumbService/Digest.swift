import CCrypto

/// SHA-256 and HMAC-SHA256 through libcrypto.
public enum Digest {
    /// SHA-256 of `bytes`, 32 bytes.
    public static func sha256(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = bytes.withContiguousStorageIfAvailable { input in
            EVP_Digest(input.baseAddress, input.count, &out, &length, EVP_sha256(), nil)
        } ?? Array(bytes).withUnsafeBufferPointer { input in
            EVP_Digest(input.baseAddress, input.count, &out, &length, EVP_sha256(), nil)
        }
        precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) failed")
        return out
    }

    /// HMAC-SHA256 of `message` keyed with `key`, 32 bytes.
    public static func hmacSHA256(key: [UInt8], message: some Collection<UInt8>) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let bytes = Array(message)
        let result = key.withUnsafeBufferPointer { k in
            bytes.withUnsafeBufferPointer { m in
                HMAC(EVP_sha256(), k.baseAddress, Int32(k.count), m.baseAddress, m.count, &out, &length)
            }
        }
        precondition(result != nil && length == 32, "HMAC(SHA-256) failed")
        return out
    }

    /// Lower-case hex.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
