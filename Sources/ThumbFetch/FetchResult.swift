/// Validators for a conditional request (revalidating an original on disk).
public struct Conditional: Sendable, Equatable {
    public var etag: String?
    public var lastModified: String?

    public init(etag: String?, lastModified: String?) {
        self.etag = etag
        self.lastModified = lastModified
    }
}

/// What a download produced.
public enum FetchResult: Sendable, Equatable {
    /// 2xx with the whole body, `length` bytes of it written to the fetch's
    /// `BodySink`; `address` is the one the final answer came from (kept with
    /// the original, so the address rules can be checked again on hits
    /// without a DNS look-up).
    case fetched(length: Int, etag: String?, lastModified: String?, finalURL: String, address: IPAddress?)
    /// 304 to a conditional request: the stored original is still current.
    case notModified(etag: String?, lastModified: String?)
}
