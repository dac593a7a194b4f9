import Synchronization
import ThumbService

/// Requests seen before, by their spelling on the wire (HTTPServer.md
/// "Memory hits"): a target and `Accept` validated under the current
/// configuration need not be verified, parsed and normalized again, and the
/// fields of the answer they last got need not be built again. The memory
/// cache still decides every hit; this only skips recomputing what the bytes
/// of the request already determined.
///
/// Bounded by bytes (a hostile client can send 8 KiB targets); an entry is
/// dropped at random when full, and all are dropped when the configuration
/// changes (a key, an allowlist or an allowed size may have changed).
final class HitShortcuts: Sendable {
    struct Key: Hashable, Sendable {
        let target: String
        let accept: String?
    }

    struct Entry: Sendable {
        let request: ThumbnailRequest
        var fields: AnswerFields?
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var bytes = 0
        var generation = 0
    }

    private let state = Mutex(State())
    let limitBytes: Int

    init(limitBytes: Int = 8 << 20) {
        self.limitBytes = limitBytes
    }

    /// The entry for `key`, if it was made under `generation`.
    func entry(_ key: Key, generation: Int) -> Entry? {
        state.withLock { s in
            guard s.generation == generation else {
                s = State(generation: generation)
                return nil
            }
            return s.entries[key]
        }
    }

    func remember(_ key: Key, _ entry: Entry, generation: Int) {
        let cost = Self.cost(key, entry)
        guard cost <= limitBytes / 64 else { return }
        state.withLock { s in
            if s.generation != generation {
                guard generation > s.generation else { return }
                s = State(generation: generation)
            }
            if let old = s.entries.updateValue(entry, forKey: key) { s.bytes -= Self.cost(key, old) }
            s.bytes += cost
            while s.bytes > limitBytes, let victim = s.entries.first(where: { $0.key != key }) {
                s.entries.removeValue(forKey: victim.key)
                s.bytes -= Self.cost(victim.key, victim.value)
            }
        }
    }

    var count: Int { state.withLock { $0.entries.count } }

    /// What an entry holds, roughly: its strings and the prepared fields.
    private static func cost(_ key: Key, _ entry: Entry) -> Int {
        128 + key.target.utf8.count + (key.accept?.utf8.count ?? 0) + entry.request.sourceURL.utf8.count
            + (entry.fields.map { $0.ok.count + $0.notModified.count + $0.etag.utf8.count } ?? 0)
    }
}
