/// What an `s3://` download needs from `s3.*` (Configuration.md, S3Sources.md): the
/// store, how to sign for it, and which buckets sources may name.
public struct S3Settings: Sendable, Equatable {
    public var endpoint: S3Endpoint
    /// Signs as `aws:amz:REGION:s3`.
    public var region: String
    public var accessKeyId: String
    public var secretAccessKey: Secret
    /// `ENDPOINT/BUCKET/KEY` when true, `BUCKET.HOST/KEY` when false.
    public var pathStyle: Bool
    /// The only buckets `s3://` sources may name; empty allows none.
    public var allowedBuckets: [String]

    public init(endpoint: S3Endpoint, region: String, accessKeyId: String, secretAccessKey: Secret,
                pathStyle: Bool = true, allowedBuckets: [String]) {
        self.endpoint = endpoint
        self.region = region
        self.accessKeyId = accessKeyId
        self.secretAccessKey = secretAccessKey
        self.pathStyle = pathStyle
        self.allowedBuckets = allowedBuckets
    }

    /// libcurl's `CURLOPT_AWS_SIGV4` value.
    var sigV4: String { "aws:amz:\(region):s3" }
}

extension FetchPolicy {
    /// The S3 settings a source naming `bucket` is read with. Without an
    /// `s3` endpoint an `s3` URL is the client's mistake (`badURL`, a `400`);
    /// a bucket outside `s3.allowedBuckets` is refused (`forbidden`, a `403`)
    /// before any request.
    public func s3Settings(for location: S3Location) throws(FetchError) -> S3Settings {
        try refuseReserved(bucket: location.bucket)
        return try s3Settings(forBucket: location.bucket)
    }

    /// The shared store's bucket is never a source, whatever the key's
    /// spelling (a store may collapse `//` or decode `%2F`) and whatever
    /// `s3.allowedBuckets` says; compared as a host name compares (a
    /// virtual-host style store folds case). An upper-case spelling is no
    /// valid bucket name and never gets here: `InfoRequest.normalizedSource`
    /// refuses it as the bucket itself.
    public func refuseReserved(bucket: String) throws(FetchError) {
        if let reserved, reserved.bucket.lowercased() == bucket.lowercased() {
            throw .forbidden("bucket \(bucket) holds the shared originals store, never a source")
        }
    }

    public func s3Settings(forBucket bucket: String) throws(FetchError) -> S3Settings {
        guard let s3 else { throw .badURL("s3 sources need s3.endpoint in the configuration") }
        guard s3.allowedBuckets.contains(bucket) else { throw .forbidden("bucket \(bucket) is not in s3.allowedBuckets") }
        return s3
    }
}

/// Where the fleet keeps its originals (`diskStore.shared`, SeveralInstances.md):
/// a bucket of the `s3` store, and the prefix of every object thumbd writes there.
public struct SharedStoreLocation: Sendable, Equatable {
    public var bucket: String
    public var prefix: String
    /// `diskStore.shared.keyFile`: where `keys` were read from (at start and on reload).
    public var keyFile: String?
    /// The fleet's keys (one or two): sidecars are signed with the first,
    /// and a tag under either passes. None: the store is not used.
    public var keys: [SharedStoreKey]

    public init(bucket: String, prefix: String = "thumbd/", keyFile: String? = nil, keys: [SharedStoreKey] = []) {
        self.bucket = bucket
        self.prefix = prefix
        self.keyFile = keyFile
        self.keys = keys
    }
}

/// One of the fleet's shared-store keys: bytes as written in the key file.
/// Like `Secret`, it never prints.
public struct SharedStoreKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A key is at least this long (HMAC-SHA256's own output size).
    public static let minBytes = 32

    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var description: String { "(secret)" }
    public var debugDescription: String { "(secret)" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
