import Foundation
import Glibc
import ThumbFetch
import ThumbService

extension ServiceConfiguration.S3 {
    /// Takes the `s3` object of the config file (Configuration.md, S3Sources.md). The
    /// secret key file is read here, so a reload (which parses the file again)
    /// reads it again. No message ever quotes a secret.
    mutating func read(_ r: inout ConfigReader) throws(ConfigurationError) {
        if let v = try r.nullableString("endpoint") {
            if let text = v {
                do throws(FetchError) { _ = try S3Endpoint(text) } catch {
                    throw ConfigurationError(key: "s3.endpoint", "must be http(s)://HOST[:PORT], not '\(text)'")
                }
            }
            endpoint = v
        }
        if let v = try r.string("region") {
            // It becomes part of libcurl's "aws:amz:REGION:s3": nothing that could split it.
            guard !v.isEmpty, v.utf8.count <= 64, v.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }) else {
                throw ConfigurationError(key: "s3.region", "must be a region name such as us-east-1 (a-z, 0-9, -)")
            }
            region = v
        }
        if let v = try r.nullableString("accessKeyId") {
            if let id = v, id.isEmpty || !id.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) {
                throw ConfigurationError(key: "s3.accessKeyId", "must be printable ASCII without spaces")
            }
            accessKeyId = v
        }
        let inline = try r.nullableString("secretAccessKey")
        let file = try r.nullableString("secretAccessKeyFile")
        if case .some(.some) = inline, case .some(.some) = file {
            throw ConfigurationError(key: "s3.secretAccessKey", "give secretAccessKey or secretAccessKeyFile, not both")
        }
        if let v = inline {
            secretAccessKey = try v.map { value throws(ConfigurationError) in try Self.secret(value, key: "s3.secretAccessKey") }
            secretAccessKeyFile = nil
        }
        if let v = file {
            secretAccessKeyFile = v
            secretAccessKey = try v.map { path throws(ConfigurationError) in try Self.readSecret(path) } ?? secretAccessKey
        }
        if let v = try r.bool("pathStyle") { pathStyle = v }
        if let v = try r.strings("allowedBuckets") {
            for bucket in v where !S3Location.isValidBucket(bucket) {
                throw ConfigurationError(key: "s3.allowedBuckets", "'\(bucket)' is not a valid S3 bucket name")
            }
            allowedBuckets = v
        }
        if let v = try r.seconds("timeoutSeconds", 0.001...86_400) { timeoutSeconds = v }
        try r.finish()
    }

    /// The rules across keys (Configuration.md, S3Sources.md): an endpoint needs an
    /// access key id and a secret; virtual-host style needs a host name.
    func validate() throws(ConfigurationError) {
        guard let endpoint else { return }
        guard accessKeyId != nil else {
            throw ConfigurationError(key: "s3.accessKeyId", "is required with s3.endpoint")
        }
        guard secretAccessKey != nil else {
            throw ConfigurationError(key: "s3.secretAccessKey", "s3.endpoint needs secretAccessKey or secretAccessKeyFile")
        }
        if !pathStyle, let parsed = try? S3Endpoint(endpoint), parsed.hostIsAddress {
            throw ConfigurationError(key: "s3.pathStyle", "false (virtual-host style) needs an endpoint with a host name, not an IP address")
        }
    }

    private static func secret(_ value: String, key: String) throws(ConfigurationError) -> Secret {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, !trimmed.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw ConfigurationError(key: key, "must be a non-empty key without control characters")
        }
        return Secret(trimmed)
    }

    /// The file's contents, surrounding whitespace (a final newline) dropped.
    private static func readSecret(_ path: String) throws(ConfigurationError) -> Secret {
        guard var bytes = KeyFile.read(path) else {
            throw ConfigurationError(key: "s3.secretAccessKeyFile",
                                     "'\(path)' is not a readable regular file of at most \(KeyFile.maxBytes) bytes")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigurationError(key: "s3.secretAccessKeyFile", "'\(path)' is not UTF-8 text")
        }
        // The buffer held the key: zero it before it is freed.
        bytes.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) }
        return try secret(text, key: "s3.secretAccessKeyFile")
    }
}
