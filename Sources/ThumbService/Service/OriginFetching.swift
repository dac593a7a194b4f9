import ThumbFetch

/// Downloads originals; `Fetcher` is the real one. A protocol so the service
/// can be driven by tests through the same seam.
public protocol OriginFetching: Sendable {
    /// Starts a download without holding a thread while it runs; `completion`
    /// runs once, on any thread, and must not block (the service hops to its
    /// own queue before touching the disk).
    func fetchOriginal(_ url: String, conditional: Conditional?,
                       completion: @escaping @Sendable (Result<FetchResult, ServiceError>) -> Void)
    /// New origin rules after a reload (SIGHUP); fetches already running keep theirs.
    func update(configuration: ServiceConfiguration)
}

extension OriginFetching {
    /// New origin rules after a reload; fetchers without any ignore it.
    public func update(configuration: ServiceConfiguration) {}

    /// Blocking, for tests and tools: waits on a semaphore while the download
    /// runs. Never call it from a completion.
    public func fetchOriginal(_ url: String, conditional: Conditional?) throws(ServiceError) -> FetchResult {
        try awaitCompletion { fetchOriginal(url, conditional: conditional, completion: $0) }
    }
}
