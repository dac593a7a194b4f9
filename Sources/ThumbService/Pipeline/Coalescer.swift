import Synchronization

/// Shares one piece of work among identical concurrent requests: the first
/// caller for a key starts it, later callers wait for its result.
///
/// The entry is removed by `complete`, which every path of the work must call
/// exactly once (success, error, or a client that went away) — Nuke's classic
/// leak is an entry left behind on one of those paths.
public final class Coalescer<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    public typealias Waiter = @Sendable (Result<Value, ServiceError>) -> Void

    private let waiting = Mutex<[Key: [Waiter]]>([:])

    public init() {}

    /// Adds `waiter` for `key`. Returns true when the caller is first and must
    /// start the work (and later call `complete`); false when it joined.
    public func join(_ key: Key, _ waiter: @escaping Waiter) -> Bool {
        waiting.withLock { table in
            if table[key] != nil {
                table[key]!.append(waiter)
                return false
            }
            table[key] = [waiter]
            return true
        }
    }

    /// Removes the entry and hands `result` to everyone who waited for it.
    public func complete(_ key: Key, with result: Result<Value, ServiceError>) {
        let waiters = waiting.withLock { $0.removeValue(forKey: key) } ?? []
        for waiter in waiters { waiter(result) }
    }

    /// Whether work for `key` is in flight.
    public func isInFlight(_ key: Key) -> Bool { waiting.withLock { $0[key] != nil } }

    /// Keys in flight (for `/stats` and leak checks in tests).
    public var inFlight: Int { waiting.withLock { $0.count } }
}
