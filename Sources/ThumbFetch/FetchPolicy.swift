/// What a fetch may do (SourcesAndLimits.md, Configuration.md `origin.*`, `limits.maxSourceBytes`).
public struct FetchPolicy: Sendable, Equatable {
    public var allowedHosts: [String]
    public var allowPrivateNetworks: Bool
    public var maxRedirects: Int
    public var connectTimeout: Double
    /// One deadline per download, from when it is queued, across every redirect.
    public var totalTimeout: Double
    public var maxBytes: Int
    /// PEM bundle of trusted CAs for `https`; nil uses the system store.
    public var caFile: String?
    /// Transfers running at once; more wait their turn.
    public var maxConcurrentFetches: Int
    /// The store `s3://` sources are read from; nil when `s3.endpoint` is not set.
    public var s3: S3Settings?
    /// The shared originals store's objects (`diskStore.shared`): never a
    /// source, whatever `s3.allowedBuckets` says.
    public var reserved: SharedStoreLocation?

    public init(allowedHosts: [String], allowPrivateNetworks: Bool, maxRedirects: Int,
                connectTimeout: Double, totalTimeout: Double, maxBytes: Int,
                caFile: String? = nil, maxConcurrentFetches: Int = 64, s3: S3Settings? = nil) {
        self.allowedHosts = allowedHosts
        self.allowPrivateNetworks = allowPrivateNetworks
        self.maxRedirects = maxRedirects
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
        self.maxBytes = maxBytes
        self.caFile = caFile
        self.maxConcurrentFetches = maxConcurrentFetches
        self.s3 = s3
    }

    /// The host rule, applied to the first URL and every redirect target.
    public func checkHost(_ url: SourceURL) throws(FetchError) {
        guard HostPattern.allows(url.host, patterns: allowedHosts) else {
            throw .forbidden("host \(url.host) is not in origin.allowedHosts")
        }
    }

    /// The address rule; nil when `address` may be connected to, else why not.
    public func refusal(of address: IPAddress,
                        classify: (IPAddress) -> AddressClass = AddressClassifier.classify) -> AddressClass? {
        if allowPrivateNetworks { return nil }
        let found = classify(address)
        return found == .public ? nil : found
    }
}
