import ThumbFetch

extension Fetcher: OriginFetching {
    public func fetchOriginal(_ source: OriginalSource, conditional: Conditional?, into sink: any BodySink,
                              completion: @escaping @Sendable (Result<FetchResult, ServiceError>) -> Void) {
        fetch(source, conditional: conditional, into: sink) { completion($0.mapError(ServiceError.init)) }
    }

    public func fetchOriginal(_ source: OriginalSource, conditional: Conditional?, into sink: any BodySink,
                              wanted: (@Sendable () -> Bool)?,
                              completion: @escaping @Sendable (Result<FetchResult, ServiceError>) -> Void) {
        fetch(source, conditional: conditional, into: sink, wanted: wanted) { completion($0.mapError(ServiceError.init)) }
    }

    public func update(configuration: ServiceConfiguration) {
        update(policy: FetchPolicy(configuration: configuration))
    }
}

extension FetchPolicy {
    /// The rules of SourcesAndLimits.md as `origin.*`, `limits.maxSourceBytes` and `s3.*` set them.
    public init(configuration c: ServiceConfiguration) {
        self.init(allowedHosts: c.origin.allowedHosts, allowPrivateNetworks: c.origin.allowPrivateNetworks,
                  maxRedirects: c.origin.maxRedirects, connectTimeout: c.origin.connectTimeoutSeconds,
                  totalTimeout: c.origin.timeoutSeconds, maxBytes: c.limits.maxSourceBytes,
                  caFile: c.origin.caFile, maxConcurrentFetches: c.origin.maxConcurrentFetches, s3: c.s3.settings)
        // Where it is, not its keys: the fetcher never needs them.
        reserved = c.diskStore.shared.map { SharedStoreLocation(bucket: $0.bucket, prefix: $0.prefix) }
    }
}

extension ServiceError {
    /// The one place download failures become service errors (SourcesAndLimits.md).
    public init(_ error: FetchError) {
        switch error {
        case .badURL(let m): self = .badRequest(m)
        case .forbidden(let m): self = .forbiddenSource(m)
        case .notFound: self = .sourceNotFound
        case .origin(let m): self = .originError(m)
        case .tooLarge(let limit): self = .sourceTooLarge(limit: limit)
        case .timeout(let m): self = .originTimeout(m)
        // The service's own disk failed, not the origin: a 500 that is logged, never remembered.
        case .storage(let m): self = .internalError("keeping the download: \(m)")
        }
    }
}
