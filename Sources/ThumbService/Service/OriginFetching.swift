import ThumbFetch
/// Downloads originals; `Fetcher` is the real one. A protocol so the service
/// can be driven by tests through the same seam.
public protocol OriginFetching: Sendable {
    /// Blocking: called on the fetch queue, never on a socket thread.
    func fetchOriginal(_ url: String, conditional: Conditional?) throws(ServiceError) -> FetchResult
    /// New origin rules after a reload (SIGHUP); fetches already running keep theirs.
    func update(configuration: ServiceConfiguration)
}

extension OriginFetching {
    /// New origin rules after a reload; fetchers without any ignore it.
    public func update(configuration: ServiceConfiguration) {}
}
