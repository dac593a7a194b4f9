import ThumbFetch
import Foundation
import Synchronization

/// Gets an original's bytes: from the disk store while fresh, revalidated with
/// the origin once past `diskStore.ttlSeconds`, else downloaded and stored.
/// Blocking; runs on the fetch queue.
struct OriginLoader: Sendable {
    let fetcher: any OriginFetching
    let disk: DiskStore?
    let counters: SharedCounters
    let now: @Sendable () -> Double

    /// `ttl`: seconds an original on disk is trusted without asking the origin.
    /// `onChanged` runs when a revalidation finds new bytes (prepared variants
    /// of the old ones must go).
    func load(_ url: String, ttl: Double, onChanged: (String) -> Void) throws(ServiceError) -> Original {
        guard let stored = disk?.load(url: url) else {
            let result = try download(url, conditional: nil)
            guard case .fetched(let body, let etag, let lastModified, _) = result else {
                throw .originError("origin answered 304 to an unconditional request")
            }
            return keep(url, body: body, etag: etag, lastModified: lastModified)
        }
        if now() - stored.metadata.fetchedAt <= ttl {
            return Original(data: stored.data, metadata: stored.metadata, outcome: .disk)
        }
        disk?.noteRevalidation()
        let conditional = Conditional(etag: stored.metadata.etag, lastModified: stored.metadata.lastModified)
        let result: FetchResult
        do {
            result = try download(url, conditional: conditional)
        } catch {
            switch error {
            case .sourceNotFound:
                disk?.remove(url: url)
                onChanged(url)
                throw error
            case .originError, .originTimeout:
                // Like nginx's proxy_cache_use_stale: a flaky origin should not take down images we hold.
                return Original(data: stored.data, metadata: stored.metadata, outcome: .disk)
            default:
                throw error
            }
        }
        switch result {
        case .notModified(let etag, let lastModified):
            var metadata = stored.metadata
            metadata.fetchedAt = now()
            metadata.etag = etag ?? metadata.etag
            metadata.lastModified = lastModified ?? metadata.lastModified
            disk?.store(url: url, data: stored.data, metadata: metadata)
            return Original(data: stored.data, metadata: metadata, outcome: .disk)
        case .fetched(let body, let etag, let lastModified, _):
            let fresh = keep(url, body: body, etag: etag, lastModified: lastModified)
            if fresh.metadata.sha256 != stored.metadata.sha256 { onChanged(url) }
            return fresh
        }
    }

    private func download(_ url: String, conditional: Conditional?) throws(ServiceError) -> FetchResult {
        counters.withLock {
            $0.originFetches += 1
            $0.originInFlight += 1
        }
        do {
            let result = try fetcher.fetchOriginal(url, conditional: conditional)
            counters.withLock {
                $0.originInFlight -= 1
                if case .fetched(let body, _, _, _) = result { $0.originBytes += body.count }
            }
            return result
        } catch {
            counters.withLock {
                $0.originInFlight -= 1
                $0.originFailures += 1
            }
            throw error
        }
    }

    private func keep(_ url: String, body: [UInt8], etag: String?, lastModified: String?) -> Original {
        let metadata = OriginalMetadata(url: url, etag: etag, lastModified: lastModified, fetchedAt: now(),
                                        length: body.count, sha256: Digest.hex(Digest.sha256(body)))
        disk?.store(url: url, data: body, metadata: metadata)
        return Original(data: body, metadata: metadata, outcome: .origin)
    }
}
