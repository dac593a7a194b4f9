import Synchronization

/// Shares one piece of work among identical concurrent requests: the first
/// caller for a key starts it, later callers wait for its result.
///
/// The entry is removed by `complete`, which every path of the work must call
/// exactly once (success, error, or a client that went away) — Nuke's classic
/// leak is an entry left behind on one of those paths — or by
/// `abandonIfDeserted`, when every waiter says nobody reads its answer any more.
public final class Coalescer<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    public typealias Waiter = @Sendable (Result<Value, ServiceError>) -> Void

    /// How a waiter that may lose its reader says so: `isDeserted` turns true
    /// once nobody will read its answer (a `POST /info` batch that has
    /// answered); `abandoned` is called instead of the waiter when the work
    /// stops for that reason. A waiter without one keeps the work alive.
    public struct Desertion: Sendable {
        public let isDeserted: @Sendable () -> Bool
        public let abandoned: @Sendable () -> Void

        public init(isDeserted: @escaping @Sendable () -> Bool, abandoned: @escaping @Sendable () -> Void) {
            self.isDeserted = isDeserted
            self.abandoned = abandoned
        }
    }

    private let waiting = Mutex<[Key: [(answer: Waiter, desertion: Desertion?)]]>([:])

    public init() {}

    /// Adds `waiter` for `key`. Returns true when the caller is first and must
    /// start the work (and later call `complete` or `abandonIfDeserted`);
    /// false when it joined.
    public func join(_ key: Key, desertion: Desertion? = nil, _ waiter: @escaping Waiter) -> Bool {
        waiting.withLock { table in
            if table[key] != nil {
                table[key]!.append((waiter, desertion))
                return false
            }
            table[key] = [(waiter, desertion)]
            return true
        }
    }

    /// Removes the entry and hands `result` to everyone who waited for it.
    public func complete(_ key: Key, with result: Result<Value, ServiceError>) {
        let waiters = waiting.withLock { $0.removeValue(forKey: key) } ?? []
        for waiter in waiters { waiter.answer(result) }
    }

    /// Whether work for `key` is in flight and every waiter of it is deserted.
    public func isDeserted(_ key: Key) -> Bool {
        waiting.withLock { table in table[key].map(Self.deserted) ?? false }
    }

    /// Ends the flight without a result when every waiter is deserted, and
    /// says so (each waiter's `abandoned` is then called, outside the lock,
    /// never its answer); otherwise leaves it as it is. Atomic with `join`: a
    /// waiter joining at the same time either keeps the flight alive or,
    /// coming after, starts a new one.
    public func abandonIfDeserted(_ key: Key) -> Bool {
        let abandoned = waiting.withLock { table -> [(answer: Waiter, desertion: Desertion?)]? in
            guard let waiters = table[key], Self.deserted(waiters) else { return nil }
            return table.removeValue(forKey: key)
        }
        for waiter in abandoned ?? [] { waiter.desertion?.abandoned() }
        return abandoned != nil
    }

    private static func deserted(_ waiters: [(answer: Waiter, desertion: Desertion?)]) -> Bool {
        waiters.allSatisfy { $0.desertion?.isDeserted() == true }
    }

    /// Whether work for `key` is in flight.
    public func isInFlight(_ key: Key) -> Bool { waiting.withLock { $0[key] != nil } }

    /// Keys in flight (for `/stats` and leak checks in tests).
    public var inFlight: Int { waiting.withLock { $0.count } }
}
