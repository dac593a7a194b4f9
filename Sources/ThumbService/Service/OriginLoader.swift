import Dispatch
import ThumbClock
import ThumbFetch

/// Gets an original's bytes: from the disk store while fresh, revalidated with
/// the origin once past `diskStore.ttlSeconds`, else downloaded and stored.
///
/// Downloads hold no thread: the fetcher runs them on its own engine and calls
/// back; the disk work after a download (storing the bytes) runs on `io`,
/// never on the fetcher's thread, which serves every other download.
struct OriginLoader: Sendable {
    typealias Completion = @Sendable (Result<Original, ServiceError>) -> Void

    let fetcher: any OriginFetching
    let disk: DiskStore?
    let counters: SharedCounters
    /// When originals were fetched: calendar time, kept on disk across restarts.
    let wallClock: any WallClock
    let io: DispatchQueue

    /// Called on `io` (it reads the disk store). `ttl`: seconds an original on
    /// disk is trusted without asking the origin. `onChanged` runs when a
    /// revalidation finds new bytes or the source is gone (prepared variants of
    /// the old ones must go). `completion` runs once, on `io` or the caller's thread.
    func load(_ url: String, ttl: Double, policy: FetchPolicy, onChanged: @escaping @Sendable (String) -> Void,
              completion: @escaping Completion) {
        guard let stored = disk?.load(url: url) else {
            return download(url, conditional: nil) { result in
                completion(result.flatMap { fetched in
                    guard case .fetched(let body, let etag, let lastModified, _, let address) = fetched else {
                        return .failure(.originError("origin answered 304 to an unconditional request"))
                    }
                    return .success(keep(url, body: body, etag: etag, lastModified: lastModified, address: address))
                })
            }
        }
        if let refused = Self.refusal(of: stored.metadata, policy: policy) {
            return completion(.failure(refused))
        }
        // The age comes from the wall clock (it must survive restarts); one
        // stepped back to before the fetch makes the age negative, and that
        // original is revalidated rather than trusted for the size of the step.
        let age = wallClock.secondsSince1970 - stored.metadata.fetchedAt
        if age >= 0 && age <= ttl {
            return completion(.success(Original(data: stored.data, metadata: stored.metadata, outcome: .disk)))
        }
        disk?.noteRevalidation()
        let conditional = Conditional(etag: stored.metadata.etag, lastModified: stored.metadata.lastModified)
        download(url, conditional: conditional) { result in
            completion(revalidated(url, stored: stored, by: result, onChanged: onChanged))
        }
    }

    private func revalidated(_ url: String, stored: (metadata: OriginalMetadata, data: [UInt8]), by result: Result<FetchResult, ServiceError>,
                             onChanged: (String) -> Void) -> Result<Original, ServiceError> {
        switch result {
        case .failure(.sourceNotFound):
            disk?.remove(url: url)
            onChanged(url)
            return .failure(.sourceNotFound)
        case .failure(.originError), .failure(.originTimeout):
            // Like nginx's proxy_cache_use_stale: a flaky origin should not take down images we hold.
            return .success(Original(data: stored.data, metadata: stored.metadata, outcome: .disk))
        case .failure(let error):
            return .failure(error)
        case .success(.notModified(let etag, let lastModified)):
            var metadata = stored.metadata
            metadata.fetchedAt = wallClock.secondsSince1970
            metadata.etag = etag ?? metadata.etag
            metadata.lastModified = lastModified ?? metadata.lastModified
            disk?.store(url: url, data: stored.data, metadata: metadata)
            return .success(Original(data: stored.data, metadata: metadata, outcome: .disk))
        case .success(.fetched(let body, let etag, let lastModified, _, let address)):
            let fresh = keep(url, body: body, etag: etag, lastModified: lastModified, address: address)
            if fresh.metadata.sha256 != stored.metadata.sha256 { onChanged(url) }
            return .success(fresh)
        }
    }

    /// `completion` runs on `io`.
    private func download(_ url: String, conditional: Conditional?,
                          completion: @escaping @Sendable (Result<FetchResult, ServiceError>) -> Void) {
        counters.withLock {
            $0.originFetches += 1
            $0.originInFlight += 1
        }
        fetcher.fetchOriginal(url, conditional: conditional) { [counters, io] result in
            counters.withLock {
                $0.originInFlight -= 1
                switch result {
                case .success(.fetched(let body, _, _, _, _)): $0.originBytes += body.count
                case .success: break
                case .failure: $0.originFailures += 1
                }
            }
            io.async { completion(result) }
        }
    }

    /// The address rule on a stored original, without a DNS look-up: a reload
    /// or restart that disallows private networks stops serving what was
    /// fetched from them.
    private static func refusal(of metadata: OriginalMetadata, policy: FetchPolicy) -> ServiceError? {
        guard let text = metadata.address, let address = IPAddress(text),
              let why = policy.refusal(of: address) else { return nil }
        let host = URLNormalization.host(ofNormalized: metadata.url).map(String.init) ?? "?"
        return .forbiddenSource("source host \(host) was fetched from a \(why.rawValue) address")
    }

    private func keep(_ url: String, body: [UInt8], etag: String?, lastModified: String?,
                      address: IPAddress?) -> Original {
        let metadata = OriginalMetadata(url: url, etag: etag, lastModified: lastModified, fetchedAt: wallClock.secondsSince1970,
                                        length: body.count, sha256: Digest.hex(Digest.sha256(body)),
                                        address: address?.description)
        disk?.store(url: url, data: body, metadata: metadata)
        return Original(data: body, metadata: metadata, outcome: .origin)
    }
}
