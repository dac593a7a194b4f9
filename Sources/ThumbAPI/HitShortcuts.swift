import Synchronization
import ThumbService

/// A validated request a shortcut can stand for: its source URL counts in the entry's cost.
protocol ShortcutRequest: Sendable {
    var sourceURL: String { get }
}

extension ThumbnailRequest: ShortcutRequest {}
extension InfoRequest: ShortcutRequest {}

typealias HitShortcuts = RequestShortcuts<ThumbnailRequest>
typealias InfoShortcuts = RequestShortcuts<InfoRequest>

/// Requests seen before, by their spelling on the wire (HTTPServer.md
/// "Memory hits"): a target and `Accept` validated under the current
/// configuration need not be verified, parsed and normalized again, and the
/// fields of the answer they last got need not be built again. The memory
/// cache still decides every hit; this only skips recomputing what the bytes
/// of the request already determined.
///
/// Bounded by bytes, every byte an entry holds counted (a hostile client can
/// send 8 KiB targets): least recently used spellings go first, in O(1) per
/// eviction, so endless new spellings cannot slow the hits of known ones
/// (the table used to search for a victim under its lock). All entries are
/// dropped when the configuration changes (a key, an allowlist or an
/// allowed size may have changed).
///
/// One table for `/thumbnail` (`HitShortcuts`) and one for `GET /info`
/// (`InfoShortcuts`, whose keys have no `Accept`): without it an `/info`
/// hit spent 38 % of its CPU normalizing a URL it had seen before.
final class RequestShortcuts<Request: ShortcutRequest>: Sendable {
    struct Key: Hashable, Sendable {
        let target: String
        let accept: String?
    }

    struct Entry: Sendable {
        let request: Request
        var fields: AnswerFields?
    }

    private struct State {
        var entries: CostLRU<Key, Entry>
        var generation = 0
    }

    private let state: Mutex<State>
    let limitBytes: Int

    /// An entry over 1/64 of the limit is not kept: one spelling must not
    /// flush many.
    init(limitBytes: Int = 8 << 20) {
        self.limitBytes = limitBytes
        state = Mutex(State(entries: CostLRU(limit: limitBytes, entryDivisor: 64)))
    }

    /// The entry for `key`, if it was made under `generation`; it becomes the most recently used.
    func entry(_ key: Key, generation: Int) -> Entry? {
        state.withLock { s in
            guard s.generation == generation else {
                s = State(entries: CostLRU(limit: limitBytes, entryDivisor: 64), generation: generation)
                return nil
            }
            return s.entries.get(key)
        }
    }

    func remember(_ key: Key, _ entry: Entry, generation: Int) {
        let cost = Self.cost(key, entry)
        // The evicted entries are returned so they are freed after the lock.
        let evicted = state.withLock { s -> [(Key, Entry)]? in
            if s.generation != generation {
                guard generation > s.generation else { return nil }
                s = State(entries: CostLRU(limit: limitBytes, entryDivisor: 64), generation: generation)
            }
            return s.entries.insert(entry, for: key, cost: cost)
        }
        _ = evicted
    }

    /// The answer fields `entry` holds for the answer tagged `etag`; built by
    /// `build` and kept in the entry when it holds none or another answer's.
    func fields(_ key: Key, _ entry: Entry, etag: String, generation: Int,
                build: () -> AnswerFields) -> AnswerFields {
        if let known = entry.fields, known.etag == etag { return known }
        let fields = build()
        remember(key, .init(request: entry.request, fields: fields), generation: generation)
        return fields
    }

    var count: Int { state.withLock { $0.entries.count } }

    /// The bytes counted against `limitBytes`.
    var bytes: Int { state.withLock { $0.entries.totalCost } }

    /// Every byte an entry holds: the spelling's strings, the request's URL,
    /// the prepared fields, and its slot in the table (measured with
    /// `CacheFootprintMeasurement`, see `CostLRU.entryOverhead`).
    static func cost(_ key: Key, _ entry: Entry) -> Int {
        key.target.heapBytes + (key.accept?.heapBytes ?? 0) + entry.request.sourceURL.heapBytes
            + (entry.fields?.heapBytes ?? 0) + entryOverhead
    }

    /// The table's own bytes per entry (`CostLRU.entryOverhead`).
    static var entryOverhead: Int { CostLRU<Key, Entry>.entryOverhead }
}
