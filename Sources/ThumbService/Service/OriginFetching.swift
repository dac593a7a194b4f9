import ThumbFetch

/// Downloads originals; `Fetcher` is the real one. A protocol so the service
/// can be driven by tests through the same seam.
public protocol OriginFetching: Sendable {
    /// Starts a download without holding a thread while it runs; the body
    /// streams into `sink` as it arrives, and `completion` runs once, after
    /// the last write, on any thread, and must not block (the service hops to
    /// its own queue before touching the disk).
    func fetchOriginal(_ source: OriginalSource, conditional: Conditional?, into sink: any BodySink,
                       completion: @escaping @Sendable (Result<FetchResult, ServiceError>) -> Void)
    /// The same, asking `wanted` before the download starts and as it runs:
    /// once it says false (nobody waits for the original any more) the
    /// download ends, or never starts, with a failure.
    func fetchOriginal(_ source: OriginalSource, conditional: Conditional?, into sink: any BodySink,
                       wanted: (@Sendable () -> Bool)?,
                       completion: @escaping @Sendable (Result<FetchResult, ServiceError>) -> Void)
    /// New origin rules after a reload (SIGHUP); fetches already running keep theirs.
    func update(configuration: ServiceConfiguration)
}

extension OriginFetching {
    /// Fetchers that cannot stop a download run it to its end.
    public func fetchOriginal(_ source: OriginalSource, conditional: Conditional?, into sink: any BodySink,
                              wanted: (@Sendable () -> Bool)?,
                              completion: @escaping @Sendable (Result<FetchResult, ServiceError>) -> Void) {
        fetchOriginal(source, conditional: conditional, into: sink, completion: completion)
    }

    /// New origin rules after a reload; fetchers without any ignore it.
    public func update(configuration: ServiceConfiguration) {}

    /// Blocking, for tests and tools: waits on a semaphore while the download
    /// runs. Never call it from a completion.
    public func fetchOriginal(_ source: OriginalSource, conditional: Conditional?,
                              into sink: any BodySink) throws(ServiceError) -> FetchResult {
        try awaitCompletion { fetchOriginal(source, conditional: conditional, into: sink, completion: $0) }
    }
}
