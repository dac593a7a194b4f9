import Dispatch
import Foundation
import ThumbClock
import ThumbFetch
import ThumbRender

/// Gets an original: from the disk store while fresh, revalidated with the
/// origin once past `diskStore.ttlSeconds`, else downloaded and stored.
///
/// Downloads hold no thread and no memory buffer: the fetcher runs them on
/// its own engine and streams each body into a `DownloadFile` (a temporary
/// file in the disk store), hashing it as it arrives; the disk work after a
/// download (renaming the file into the store) runs on `io`, never on the
/// fetcher's thread, which serves every other download. What comes out is an
/// `Original` that refers to the file; its bytes are read by the render worker.
struct OriginLoader: Sendable {
    typealias Completion = @Sendable (Result<Original, ServiceError>) -> Void

    let fetcher: any OriginFetching
    let disk: DiskStore?
    /// The fleet's shared originals store (SeveralInstances.md), when configured.
    let shared: SharedStore?
    let counters: SharedCounters
    /// When originals were fetched: calendar time, kept on disk across restarts.
    let wallClock: any WallClock
    let io: DispatchQueue
    /// Where failures of the operator's own store go (S3Sources.md).
    let storeFailureLog = StoreFailureLog()
    /// Where downloads go when there is no disk store, or it cannot be
    /// written: the system's temporary directory.
    let scratch: String
    /// Holds memory of `limits.maxDecodeMemoryBytes` for a download that no
    /// file could take, which then starts again in memory (SourcesAndLimits.md § Downloads).
    let renders: RenderQueue

    /// Called on `io` (it reads the disk store). `ttl`: seconds an original on
    /// disk is trusted without asking the origin. `onChanged` runs when a
    /// revalidation finds new bytes or the source is gone (prepared variants of
    /// the old ones must go). `wanted`: asked by the download engine before a
    /// download from the origin starts and as it runs (`OriginFetching`).
    /// `completion` runs once, on `io` or the caller's thread.
    func load(_ source: OriginalSource, ttl: Double, policy: FetchPolicy, wanted: (@Sendable () -> Bool)? = nil,
              onChanged: @escaping @Sendable (String) -> Void, completion: @escaping Completion) {
        let url = source.url
        // An s3 source's bucket rules come first: a bucket not allowed, or the shared store's own,
        // costs no look-up of any kind (S3Sources.md, SeveralInstances.md).
        if case .object(let location) = source.location, let refused = Self.bucketRefusal(location, policy: policy) {
            return completion(.failure(refused))
        }
        if let stored = disk?.load(url: url) {
            return use(source, stored, ttl: ttl, policy: policy, wanted: wanted, onChanged: onChanged,
                       completion: completion)
        }
        guard let shared, shared.isEnabled else { return fetch(source, policy: policy, wanted: wanted, completion: completion) }
        // SeveralInstances.md: the shared store before the origin, whose deadline starts when the look-up ends.
        let sink = newDownload()
        shared.lookup(url, into: sink) { found in
            guard case .hit(let sidecar, let file) = found else {
                sink.discard()
                return fetch(source, policy: policy, wanted: wanted, completion: completion)
            }
            // Copied to the local store (counted in its bytes); served `X-Cache: disk`. Its facts go
            // with it, to be checked against its header before they are kept (SeveralInstances.md).
            disk?.keep(sink, url: url, metadata: sidecar.metadata)
            sink.discard()
            use(source, (sidecar.metadata, file), ttl: ttl, policy: policy, wanted: wanted, onChanged: onChanged) { result in
                completion(result.map { original in
                    var original = original
                    original.sharedFacts = sidecar.facts.flatMap { $0.sha256 == original.metadata.sha256 ? $0 : nil }
                    return original
                })
            }
        }
    }

    /// Downloads `url` afresh, keeps it, and hands it to the shared store.
    private func fetch(_ source: OriginalSource, policy: FetchPolicy, wanted: (@Sendable () -> Bool)?,
                       completion: @escaping Completion) {
        download(source, conditional: nil, into: newDownload(), policy: policy, wanted: wanted) { result, sink in
            let original = result.flatMap { fetched in
                Result { () throws(ServiceError) in
                    guard case .fetched(_, let etag, let lastModified, _, let address) = fetched else {
                        throw .originError("origin answered 304 to an unconditional request")
                    }
                    return try keep(source.url, sink, etag: etag, lastModified: lastModified, address: address)
                }
            }
            sink.discard()
            completion(original)
        }
    }

    /// An original kept locally or found in the shared store: served while
    /// fresh, revalidated with the origin once past `ttl` (counted from its
    /// fetch time, wherever it was kept).
    private func use(_ source: OriginalSource, _ stored: (metadata: OriginalMetadata, file: OriginalFile), ttl: Double,
                     policy: FetchPolicy, wanted: (@Sendable () -> Bool)?, onChanged: @escaping @Sendable (String) -> Void,
                     completion: @escaping Completion) {
        if let refused = Self.refusal(of: stored.metadata, policy: policy) {
            return completion(.failure(refused))
        }
        // The age comes from the wall clock (it must survive restarts); one
        // stepped back to before the fetch makes the age negative, and that
        // original is revalidated rather than trusted for the size of the step.
        let age = wallClock.secondsSince1970 - stored.metadata.fetchedAt
        if age >= 0 && age <= ttl {
            return completion(.success(Original(file: stored.file, metadata: stored.metadata, outcome: .disk)))
        }
        disk?.noteRevalidation()
        let conditional = Conditional(etag: stored.metadata.etag, lastModified: stored.metadata.lastModified)
        download(source, conditional: conditional, into: newDownload(), policy: policy, wanted: wanted) { result, sink in
            let original = revalidated(source.url, stored: stored, by: result, into: sink, onChanged: onChanged)
            sink.discard()
            completion(original)
        }
    }

    private func revalidated(_ url: String, stored: (metadata: OriginalMetadata, file: OriginalFile),
                             by result: Result<FetchResult, ServiceError>, into sink: DownloadFile,
                             onChanged: (String) -> Void) -> Result<Original, ServiceError> {
        switch result {
        case .failure(.sourceNotFound):
            disk?.remove(url: url)
            shared?.remove(url) { _ in }
            onChanged(url)
            return .failure(.sourceNotFound)
        case .failure(.originError), .failure(.originTimeout):
            // Like nginx's proxy_cache_use_stale: a flaky origin should not take down images we hold.
            return .success(Original(file: stored.file, metadata: stored.metadata, outcome: .disk))
        case .failure(let error):
            return .failure(error)
        case .success(.notModified(let etag, let lastModified)):
            var metadata = stored.metadata
            metadata.fetchedAt = wallClock.secondsSince1970
            metadata.etag = etag ?? metadata.etag
            metadata.lastModified = lastModified ?? metadata.lastModified
            disk?.refresh(url: url, file: stored.file, metadata: metadata)
            shared?.update(url, metadata: metadata, facts: disk?.facts(url: url, sha256: metadata.sha256))
            return .success(Original(file: stored.file, metadata: metadata, outcome: .disk))
        case .success(.fetched(_, let etag, let lastModified, _, let address)):
            return Result { () throws(ServiceError) in
                let fresh = try keep(url, sink, etag: etag, lastModified: lastModified, address: address)
                if fresh.metadata.sha256 != stored.metadata.sha256 { onChanged(url) }
                return fresh
            }
        }
    }

    private func newDownload() -> DownloadFile {
        disk?.newDownload(scratch: scratch) ?? DownloadFile(store: nil, scratch: scratch)
    }

    /// `completion` runs on `io`, after the last byte reached the download
    /// it is given: `sink`, or, when no file could hold the body (the disk
    /// store and the temporary directory both full), a download in memory
    /// started again once the memory it may need is held (downloads wait
    /// for room, like renders).
    private func download(_ source: OriginalSource, conditional: Conditional?, into sink: DownloadFile, policy: FetchPolicy,
                          wanted: (@Sendable () -> Bool)?,
                          completion: @escaping @Sendable (Result<FetchResult, ServiceError>, DownloadFile) -> Void) {
        counters.withLock {
            $0.originFetches += 1
            $0.originInFlight += 1
        }
        fetcher.fetchOriginal(source, conditional: conditional, into: sink, wanted: wanted) { [counters, io, storeFailureLog] result in
            counters.withLock {
                $0.originInFlight -= 1
                switch result {
                case .success(.fetched(let length, _, _, _, _)): $0.originBytes += length
                case .success: break
                case .failure: $0.originFailures += 1
                }
            }
            io.async {
                if case .failure = result, sink.foundNoPlace {
                    sink.discard()
                    return inMemory(source, conditional: conditional, policy: policy, wanted: wanted,
                                    storeFailure: sink.storeFailure, completion: completion)
                }
                if case .failure = result, sink.overflowed {
                    return completion(.failure(.imageTooLarge("the original is over the memory of maxDecodeMemoryBytes "
                                                              + "a download in memory may hold")), sink)
                }
                if case .failure(let error) = result { storeFailureLog.note(error, source: source.url) }
                completion(result, sink)
            }
        }
    }

    /// Starts a download again in memory once `RenderQueue.hold` granted
    /// what it may need (`limits.maxSourceBytes`, at most the whole
    /// `limits.maxDecodeMemoryBytes`); the original keeps the hold until its bytes go.
    private func inMemory(_ source: OriginalSource, conditional: Conditional?, policy: FetchPolicy,
                          wanted: (@Sendable () -> Bool)?, storeFailure: StoredFile.WriteError?,
                          completion: @escaping @Sendable (Result<FetchResult, ServiceError>, DownloadFile) -> Void) {
        let limit = min(policy.maxBytes, renders.memoryBudget)
        renders.hold(limit) { hold in
            let sink = DownloadFile(inMemory: limit, hold: hold, storeFailure: storeFailure)
            download(source, conditional: conditional, into: sink, policy: policy, wanted: wanted, completion: completion)
        }
    }

    /// The address rule on a stored original, without a DNS look-up: a reload
    /// or restart that disallows private networks stops serving what was
    /// fetched from them; for an s3 original, the bucket rules.
    private static func refusal(of metadata: OriginalMetadata, policy: FetchPolicy) -> ServiceError? {
        // An s3 original: the bucket rules, never the address rules (the endpoint is configuration).
        if S3Location.hasScheme(metadata.url) {
            do throws(FetchError) {
                return bucketRefusal(try S3Location(metadata.url), policy: policy)
            } catch {
                return ServiceError(error)
            }
        }
        guard let text = metadata.address, let address = IPAddress(text),
              let why = policy.refusal(of: address) else { return nil }
        let host = URLNormalization.host(ofNormalized: metadata.url).map(String.init) ?? "?"
        return .forbiddenSource("source host \(host) was fetched from a \(why.rawValue) address")
    }

    /// The bucket rules of an `s3` source (nil when it may be read).
    private static func bucketRefusal(_ location: S3Location, policy: FetchPolicy) -> ServiceError? {
        do throws(FetchError) {
            _ = try policy.s3Settings(for: location)
            return nil
        } catch {
            return ServiceError(error)
        }
    }

    /// A finished download as an original: renamed into the disk store when
    /// the store keeps it; otherwise its file is removed by `sink.discard()`,
    /// and the returned original's descriptor alone keeps the bytes.
    private func keep(_ url: String, _ sink: DownloadFile, etag: String?, lastModified: String?,
                      address: IPAddress?) throws(ServiceError) -> Original {
        let (file, sha256) = try sink.finish()
        let metadata = OriginalMetadata(url: url, etag: etag, lastModified: lastModified,
                                        fetchedAt: wallClock.secondsSince1970, length: file.length, sha256: sha256,
                                        address: address?.description)
        disk?.keep(sink, url: url, metadata: metadata)
        // Also one too large for the local store: the descriptor keeps its bytes until the write is done.
        shared?.write(url, file: file, metadata: metadata)
        return Original(file: file, metadata: metadata, outcome: .origin)
    }
}
