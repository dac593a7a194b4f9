import Dispatch
import ThumbClock
import ThumbFetch
import ThumbRender

/// The shared store's background writes: a bounded queue, a few requests at
/// once, one job per source at a time.
///
/// A source has at most one job queued and one running. A job for a source
/// already queued merges into it (the newer metadata, the facts if any), so
/// an original fetched and its facts computed a moment later cost one
/// object and one sidecar; a job for a source whose write is running waits
/// behind it, so a late sidecar can never be overtaken by an older one.
struct WriteQueue {
    enum Job: Sendable {
        /// The original's bytes (nil: the sidecar alone), then its sidecar.
        case write(SharedSidecar, OriginalFile?)
        case delete
    }

    /// Sources waiting their turn (a full queue drops new ones, counted).
    static let maxPending = 256
    /// Requests to the store at once: writes are never urgent, and the
    /// fetcher's slots are the origins' first.
    static let maxRunning = 4
    /// How long a new write waits before it starts: long enough for the facts
    /// of a first render (computed just after it) to merge into it, so most
    /// originals cost one object and one sidecar, not a second sidecar.
    static let settle: Duration = .milliseconds(500)

    var statistics = SharedStore.Statistics()
    var order: [String] = []
    /// When each queued source's job may start (a new job waits `settle`).
    var due: [String: AnyClock.Instant] = [:]
    var queued: [String: Job] = [:]
    var running: Set<String> = []
    /// Jobs for sources whose write is running.
    var waiting: [String: Job] = [:]
    /// Set by a failed write, cleared by the next good one: an outage is logged once.
    var writeFailing = false
    var readFailing = false

    static func merge(_ old: Job?, _ new: Job) -> Job {
        guard case .write(let newer, let bytes) = new, case .write(let older, let oldBytes)? = old,
              older.metadata.sha256 == newer.metadata.sha256 else { return new }
        return .write(SharedSidecar(metadata: newer.metadata, facts: newer.facts ?? older.facts), bytes ?? oldBytes)
    }
}

extension SharedStore {
    /// Writes a fetched original and its sidecar in the background. Never
    /// fails the request that fetched it: a dropped or failed write is counted
    /// in `writeFailures` and logged.
    func write(_ url: String, file: OriginalFile, metadata: OriginalMetadata, facts: OriginalFacts? = nil) {
        enqueue(url, WriteQueue.Job.write(SharedSidecar(metadata: metadata, facts: facts), file))
    }

    /// Rewrites the sidecar alone: facts computed later, or a revalidation
    /// that confirmed the bytes (a new fetch time).
    func update(_ url: String, metadata: OriginalMetadata, facts: OriginalFacts?) {
        // While writes fail, the original's own object most likely did not get there either.
        guard !state.withLock({ $0.writeFailing }) else { return }
        enqueue(url, WriteQueue.Job.write(SharedSidecar(metadata: metadata, facts: facts), nil))
    }

    /// Removes `url`'s shared copy (`DELETE /cache`, a source gone at its
    /// origin). A write queued for it is dropped; one running is followed by
    /// the deletion. `completion` (on any thread) says whether a copy was there.
    func remove(_ url: String, completion: @escaping @Sendable (Bool) -> Void) {
        guard let s = settings.withLock({ $0 }) else { return completion(false) }
        let key = Self.key(s.location, url: url)
        state.withLock { q in
            if q.queued.removeValue(forKey: url) != nil {
                q.order.removeAll { $0 == url }
                q.due[url] = nil
            }
            // The running write's turn ends with a second deletion (`pump`).
            if q.running.contains(url) { q.waiting[url] = .delete }
        }
        objects.object(.head, bucket: s.location.bucket, key: key, timeout: s.timeout) { [self] found in
            // The sidecar first: without it the object is never read.
            delete(key, in: s) { removed in
                completion(removed && (try? found.get()) != nil)
            }
        }
    }

    private func delete(_ key: String, in s: Settings, completion: @escaping @Sendable (Bool) -> Void) {
        objects.object(.delete, bucket: s.location.bucket, key: key + ".json", timeout: s.timeout) { [self] first in
            objects.object(.delete, bucket: s.location.bucket, key: key, timeout: s.timeout) { [self] second in
                let ok = (try? first.get()) != nil && (try? second.get()) != nil
                if !ok { wrote(false, what: "deleting \(key)", first.failure ?? second.failure) }
                completion(ok)
            }
        }
    }

    private func enqueue(_ url: String, _ job: WriteQueue.Job) {
        guard isEnabled else { return }
        let dropped = state.withLock { q -> Bool in
            if q.running.contains(url) {
                q.waiting[url] = WriteQueue.merge(q.waiting[url], job)
                return false
            }
            if let old = q.queued[url] {
                q.queued[url] = WriteQueue.merge(old, job)
                return false
            }
            guard q.order.count < WriteQueue.maxPending else {
                q.statistics.writeFailures += 1
                return true
            }
            q.queued[url] = job
            q.order.append(url)
            q.due[url] = clock.now.advanced(by: WriteQueue.settle)
            return false
        }
        if dropped { wrote(false, what: "writing \(url)", .origin("the write queue is full (\(WriteQueue.maxPending))"), counted: true) }
        io.asyncAfter(deadline: .now() + (WriteQueue.settle + .milliseconds(10)).dispatchInterval) { [self] in pump() }
    }

    /// Starts queued jobs while fewer than `maxRunning` run.
    private func pump() {
        let now = clock.now
        while let (url, job) = state.withLock({ q -> (String, WriteQueue.Job)? in
            // In order of arrival, each once its settling time is over (a job behind a running one may start at once).
            guard q.running.count < WriteQueue.maxRunning, let url = q.order.first,
                  q.due[url].map({ $0 <= now }) ?? true else { return nil }
            q.order.removeFirst()
            q.due[url] = nil
            guard let job = q.queued.removeValue(forKey: url) else { return nil }
            q.running.insert(url)
            return (url, job)
        }) {
            run(url, job) { [self] objectWritten in
                state.withLock { q in
                    q.running.remove(url)
                    // A sidecar alone where the original's object could not be written would describe nothing.
                    if !objectWritten, case .write(_, nil)? = q.waiting[url] { q.waiting[url] = nil }
                    if let next = q.waiting.removeValue(forKey: url) {
                        q.queued[url] = next
                        q.order.insert(url, at: 0)
                    }
                }
                pump()
            }
        }
    }

    /// `done(false)` when a job that had an original to write could not write it.
    private func run(_ url: String, _ job: WriteQueue.Job, done: @escaping @Sendable (Bool) -> Void) {
        guard let s = settings.withLock({ $0 }) else { return done(true) }
        let key = Self.key(s.location, url: url)
        switch job {
        case .delete:
            delete(key, in: s) { _ in done(true) }
        case .write(let sidecar, let file):
            // Signed with the first key (a second one only still passes, while a new key is rolled out).
            guard let signing = s.location.keys.first else { return done(true) }
            let document = sidecar.signed(with: signing)
            let putSidecar: @Sendable () -> Void = { [self] in
                objects.object(.put(.bytes(document), sha256: Digest.hex(Digest.sha256(document)), contentType: "application/json"),
                               bucket: s.location.bucket, key: key + ".json", timeout: s.timeout) { [self] result in
                    if file != nil || result.failure != nil {
                        wrote(result.failure == nil, what: "writing \(key).json", result.failure)
                    }
                    done(file == nil || result.failure == nil)
                }
            }
            guard let file else { return putSidecar() }
            let span = file.span
            objects.object(.put(.file(descriptor: span.descriptor, offset: span.offset, length: file.length),
                                sha256: sidecar.metadata.sha256, contentType: "application/octet-stream"),
                           bucket: s.location.bucket, key: key, timeout: s.timeout) { [self] result in
                // The descriptor stays open until the engine has its duplicate: `file` lives in this closure.
                withExtendedLifetime(file) {}
                if let error = result.failure {
                    wrote(false, what: "writing \(key)", error)
                    return done(false)
                }
                putSidecar()
            }
        }
    }

    /// Counts an original written (object and sidecar) or a failed write, and
    /// logs the first failure of an outage and the recovery.
    private func wrote(_ ok: Bool, what: String, _ error: FetchError?, counted: Bool = false) {
        let line: String? = state.withLock { q in
            if ok {
                q.statistics.writes += 1
                defer { q.writeFailing = false }
                return q.writeFailing ? "shared store: writing again" : nil
            }
            if !counted { q.statistics.writeFailures += 1 }
            defer { q.writeFailing = true }
            return q.writeFailing ? nil : "shared store: \(what) failed (\(error.map(Self.describe) ?? "?")); "
                + "originals are served without a shared copy while it fails"
        }
        if let line { note(line) }
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let f) = self { return f }
        return nil
    }
}
