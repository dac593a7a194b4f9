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
        let settings = try s3Settings(forBucket: location.bucket)
        if let reserved, reserved.bucket == location.bucket, location.key.hasPrefix(reserved.prefix) {
            throw .forbidden("\(location.bucket)/\(reserved.prefix) is the shared originals store, never a source")
        }
        return settings
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

    public init(bucket: String, prefix: String = "thumbd/") {
        self.bucket = bucket
        self.prefix = prefix
    }
}
