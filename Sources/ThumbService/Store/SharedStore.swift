import Dispatch
import Synchronization
import ThumbClock
import ThumbFetch

/// Requests to the operator's bucket; `Fetcher` makes them (signed, on its
/// engine). A protocol so the service core does not depend on libcurl.
public protocol ObjectStoring: Sendable {
    func object(_ operation: ObjectOperation, bucket: String, key: String, timeout: Double,
                completion: @escaping @Sendable (Result<ObjectAnswer, FetchError>) -> Void)
}

extension Fetcher: ObjectStoring {}

/// The fleet's shared originals store (SeveralInstances.md, `diskStore.shared`):
/// one object per original in the `s3` store, named by the digest of its
/// normalized URL under `prefix`, with a JSON sidecar beside it
/// (`SharedSidecar`). Instances look here after their own disk store and
/// before the origin, and write what they fetched here in the background.
///
/// It is a cache, never a dependency: a store that is down, slow, refuses
/// the credentials or has lost its bucket makes every look-up a counted
/// `readFailures` that goes on to the origin, and every write a counted
/// `writeFailures`; no request fails because of it.
public final class SharedStore: Sendable {
    /// Figures for `/stats` `sharedStore` (Statistics.md).
    public struct Statistics: Equatable, Sendable {
        public var hits = 0
        public var misses = 0
        public var writes = 0
        public var writeFailures = 0
        public var readFailures = 0

        public init() {}
    }

    /// What a look-up found.
    enum Lookup: Sendable {
        /// The original, whole and matching its sidecar, in the sink's file.
        case hit(SharedSidecar, OriginalFile)
        /// Not there (or not whole): ask the origin.
        case miss
        /// The store failed or was too slow: ask the origin.
        case failed
    }

    /// What the store is asked with, from the configuration in force.
    struct Settings: Equatable, Sendable {
        var location: SharedStoreLocation
        /// `s3.timeoutSeconds`: one deadline for a whole look-up.
        var timeout: Double
        /// `limits.maxSourceBytes`: a copy larger than this instance allows is not taken.
        var maxSourceBytes: Int
    }

    let objects: any ObjectStoring
    let settings: Mutex<Settings?>
    let state = Mutex(WriteQueue())
    /// Disk work after a look-up runs here, never on the fetcher's thread.
    let io: DispatchQueue
    let log = Mutex<(@Sendable (String) -> Void)?>(nil)
    /// The service's clock: the look-up's deadline and the writes' settling.
    let clock: AnyClock

    init(objects: any ObjectStoring, configuration: ServiceConfiguration, io: DispatchQueue, clock: AnyClock) {
        self.objects = objects
        self.io = io
        self.clock = clock
        settings = Mutex(Self.settings(configuration))
    }

    static func settings(_ c: ServiceConfiguration) -> Settings? {
        guard let location = c.diskStore.shared, c.s3.settings != nil else { return nil }
        return Settings(location: location, timeout: c.s3.timeoutSeconds, maxSourceBytes: c.limits.maxSourceBytes)
    }

    /// A reload: another bucket, prefix or timeout from now on; null turns it off.
    func update(_ configuration: ServiceConfiguration) {
        settings.withLock { $0 = Self.settings(configuration) }
    }

    var isEnabled: Bool { settings.withLock { $0 != nil } }

    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// The original's object key; its sidecar is this plus `.json`.
    static func key(_ location: SharedStoreLocation, url: String) -> String {
        location.prefix + DiskStore.name(for: url)
    }

    /// Looks for `url`'s original: the sidecar, then the bytes into `sink`,
    /// checked against the sidecar's digest and length. One deadline
    /// (`s3.timeoutSeconds`) covers both requests. `completion` runs once, on `io`.
    func lookup(_ url: String, into sink: DownloadFile, completion: @escaping @Sendable (Lookup) -> Void) {
        guard let s = settings.withLock({ $0 }) else { return io.async { completion(.miss) } }
        let key = Self.key(s.location, url: url)
        let started = clock.now
        let answer: @Sendable (Lookup) -> Void = { [self] found in
            count(found)
            io.async { completion(found) }
        }
        let document = MemorySink()
        objects.object(.get(into: document, maxBytes: SharedSidecar.maxBytes), bucket: s.location.bucket,
                       key: key + ".json", timeout: s.timeout) { [self] result in
            switch result {
            case .failure(.notFound): return answer(.miss)
            case .failure(let error): return answer(failed("reading \(key).json", error))
            case .success: break
            }
            // Another URL with the same digest, or another version: not ours to serve.
            guard let sidecar = SharedSidecar.parse(document.bytes), sidecar.metadata.url == url else { return answer(.miss) }
            // Another instance (or this one before a reload) may allow larger sources: the origin's answer decides.
            guard sidecar.metadata.length <= s.maxSourceBytes else { return answer(.miss) }
            let left = s.timeout - started.duration(to: clock.now).inSeconds
            guard left > 0.001 else { return answer(failed("reading \(key)", .timeout("the look-up took longer than s3.timeoutSeconds"))) }
            objects.object(.get(into: sink, maxBytes: max(sidecar.metadata.length, 1)), bucket: s.location.bucket,
                           key: key, timeout: left) { [self] result in
                switch result {
                case .failure(.notFound): return answer(.miss)
                case .failure(let error): return answer(failed("reading \(key)", error))
                case .success: break
                }
                io.async { [self] in
                    // On io: finishing reads the file's descriptor state, which the engine's thread no longer touches.
                    guard let (file, sha256) = try? sink.finish(), sha256 == sidecar.metadata.sha256,
                          file.length == sidecar.metadata.length else {
                        let found = failed("reading \(key)", .origin("its bytes do not match its sidecar"))
                        count(found)
                        return completion(found)
                    }
                    count(.hit(sidecar, file))
                    completion(.hit(sidecar, file))
                }
            }
        }
    }

    private func count(_ found: Lookup) {
        state.withLock { s in
            switch found {
            case .hit:
                s.statistics.hits += 1
                if s.readFailing {
                    s.readFailing = false
                    note("shared store: reading again")
                }
            case .miss: s.statistics.misses += 1
            case .failed: s.statistics.readFailures += 1
            }
        }
    }

    /// Logged once per outage (not per request), counted by `count`.
    private func failed(_ what: String, _ error: FetchError) -> Lookup {
        let first = state.withLock { s in
            defer { s.readFailing = true }
            return !s.readFailing
        }
        if first { note("shared store: \(what) failed (\(Self.describe(error))); sources go to their origin while it fails") }
        return .failed
    }

    func note(_ line: String) {
        log.withLock { $0 }?(line)
    }

    static func describe(_ error: FetchError) -> String {
        switch error {
        case .badURL(let m), .forbidden(let m), .origin(let m), .timeout(let m), .storage(let m): m
        case .notFound: "not found"
        case .tooLarge(let limit): "larger than its sidecar says (\(limit) bytes)"
        }
    }
}
