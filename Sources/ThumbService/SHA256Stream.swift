import CCrypto

/// SHA-256 over bytes that arrive in pieces (a download as it streams to
/// disk), through libcrypto's EVP interface. Not thread-safe: one writer at a
/// time, as a download has.
final class SHA256Stream {
    private let context: OpaquePointer

    init() {
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, Digest.sha256Method, nil) == 1 else {
            preconditionFailure("EVP_DigestInit_ex(SHA-256) failed")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        precondition(EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) == 1, "EVP_DigestUpdate failed")
    }

    /// The digest of everything so far, 32 bytes; the stream is spent after.
    func finish() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        precondition(EVP_DigestFinal_ex(context, &out, &length) == 1 && length == 32, "EVP_DigestFinal_ex failed")
        return out
    }
}
