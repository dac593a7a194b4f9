import Dispatch
import Synchronization
import ThumbClock
import ThumbFetch
import ThumbRender

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
        /// Sidecars whose `mac` failed, originals whose bytes are not what
        /// their sidecar says: treated as absent, logged, replaced.
        public var rejected = 0

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
        /// What is there failed its check (not the fleet's, or not its
        /// bytes): ask the origin, whose copy replaces it.
        case rejected
    }

    /// What the store is asked with, from the configuration in force.
    struct Settings: Equatable, Sendable {
        var location: SharedStoreLocation
        /// `s3.timeoutSeconds`: one deadline for a whole look-up.
        var timeout: Double
        /// `limits.maxSourceBytes`: a copy larger than this instance allows is not taken.
        var maxSourceBytes: Int
        /// `origin.allowPrivateNetworks`: an http(s) copy whose sidecar does
        /// not say where it came from is only taken when any address would do.
        var allowPrivateNetworks: Bool
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
        // Without a key nothing read could be trusted, nor anything written be trusted by others.
        guard let location = c.diskStore.shared, !location.keys.isEmpty, c.s3.settings != nil else { return nil }
        return Settings(location: location, timeout: c.s3.timeoutSeconds, maxSourceBytes: c.limits.maxSourceBytes,
                        allowPrivateNetworks: c.origin.allowPrivateNetworks)
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

    /// Looks for `url`'s original: the sidecar, its `mac` checked, then the
    /// bytes into `sink`, checked against the sidecar's digest and length.
    /// One deadline (`s3.timeoutSeconds`) covers both requests. `completion`
    /// runs once, on `io`.
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
            // Longer than any sidecar thumbd writes.
            case .failure(.tooLarge): return answer(rejected("\(key).json", "it is not a sidecar"))
            case .failure(let error): return answer(failed("reading \(key).json", error))
            case .success: break
            }
            let sidecar: SharedSidecar
            switch SharedSidecar.read(document.bytes, keys: s.location.keys) {
            case .valid(let found): sidecar = found
            case .otherRelease: return answer(.miss)
            case .rejected(let why): return answer(rejected("\(key).json", why))
            }
            // Another URL with the same digest: not ours to serve.
            guard sidecar.metadata.url == url else { return answer(.miss) }
            // Another instance (or this one before a reload) may allow larger sources: the origin's answer decides.
            guard sidecar.metadata.length <= s.maxSourceBytes else { return answer(.miss) }
            // Without the address it came from, the private-network rule cannot be checked on it (an s3
            // source's needs none): the origin is asked, where the rule holds.
            guard sidecar.metadata.address != nil || s.allowPrivateNetworks || S3Location.hasScheme(url) else {
                return answer(.miss)
            }
            let left = s.timeout - started.duration(to: clock.now).inSeconds
            guard left > 0.001 else { return answer(failed("reading \(key)", .timeout("the look-up took longer than s3.timeoutSeconds"))) }
            objects.object(.get(into: sink, maxBytes: max(sidecar.metadata.length, 1)), bucket: s.location.bucket,
                           key: key, timeout: left) { [self] result in
                switch result {
                case .failure(.notFound): return answer(.miss)
                case .failure(.tooLarge): return answer(rejected(key, "it is longer than its sidecar says"))
                case .failure(let error): return answer(failed("reading \(key)", error))
                case .success: break
                }
                io.async { [self] in
                    // On io: finishing reads the file's descriptor state, which the engine's thread no longer touches.
                    let found: Lookup
                    if let (file, sha256) = try? sink.finish() {
                        found = sha256 == sidecar.metadata.sha256 && file.length == sidecar.metadata.length
                            ? .hit(sidecar, file) : rejected(key, "its bytes do not hash to its sidecar's SHA-256")
                    } else {
                        found = failed("reading \(key)", .storage("the local copy could not be finished"))
                    }
                    count(found)
                    completion(found)
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
            case .rejected: s.statistics.rejected += 1
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

    /// Facts of a sidecar that fail their check: counted and logged as a
    /// rejection; the original itself is served, and its facts computed again.
    func rejectFacts(_ url: String, _ why: String) {
        guard let s = settings.withLock({ $0 }) else { return }
        state.withLock { $0.statistics.rejected += 1 }
        note("shared store: the facts in \(Self.key(s.location, url: url)).json rejected (\(why)); they are computed again")
    }

    /// Logged each time: what is in the bucket was not written by the fleet
    /// (or was damaged there), which the operator must hear of.
    private func rejected(_ object: String, _ why: String) -> Lookup {
        note("shared store: \(object) rejected (\(why)); the origin is asked, and its copy replaces it")
        return .rejected
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
