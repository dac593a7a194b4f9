import Synchronization

/// Render flights in progress, one per variant: each owns its waiters, its
/// priority and its queued job, under one lock. Joining a flight, promoting
/// it and recording its job are one step, so a live request that joins a
/// prefetch render either finds the job and promotes it, or the submission
/// sees the flight already live. (Keeping priorities beside a plain
/// coalescer under a second lock leaked entries and missed promotions.)
///
/// Every flight ends exactly once, on every path: through `complete`, or
/// through `abandonIfDeserted` when no waiter's client is left to answer.
final class RenderFlights<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    typealias Waiter = @Sendable (Result<Value, ServiceError>) -> Void
    /// True once a waiter's client has gone (its connection closed).
    typealias ClientGone = @Sendable () -> Bool

    private struct Flight {
        /// Each with how to tell its client has gone; nil for a waiter no
        /// client can leave (a prefetch item), which keeps the flight alive.
        var waiters: [(answer: Waiter, clientGone: ClientGone?)]
        var priority: RenderQueue.Priority
        /// The render queue's id of the flight's job once submitted.
        var job: Int?
    }

    private let flights = Mutex<[Key: Flight]>([:])

    /// Starts a flight (true: the caller does the work and later calls
    /// `complete`) or joins the one in progress (false). A live waiter joining
    /// a prefetch flight makes it live; `promote` gets its job id if the job
    /// is already queued. `clientGone`: see `abandonIfDeserted`.
    func join(_ key: Key, priority: RenderQueue.Priority, clientGone: ClientGone? = nil, promote: (Int) -> Void,
              _ waiter: @escaping Waiter) -> Bool {
        flights.withLock { table in
            guard table[key] != nil else {
                table[key] = Flight(waiters: [(waiter, clientGone)], priority: priority, job: nil)
                return true
            }
            table[key]!.waiters.append((waiter, clientGone))
            if priority == .live, table[key]!.priority == .prefetch {
                table[key]!.priority = .live
                if let job = table[key]!.job { promote(job) }
            }
            return false
        }
    }

    /// Submits the flight's job at the flight's current priority and records
    /// its id, atomically with respect to `join`.
    func submit(_ key: Key, _ submit: (RenderQueue.Priority) throws(ServiceError) -> Int) throws(ServiceError) {
        let failure: ServiceError? = flights.withLock { table in
            do throws(ServiceError) {
                let id = try submit(table[key]?.priority ?? .live)
                table[key]?.job = id
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// Ends the flight and hands `result` to every waiter, outside the lock.
    func complete(_ key: Key, with result: Result<Value, ServiceError>) {
        let waiters = flights.withLock { $0.removeValue(forKey: key)?.waiters } ?? []
        for waiter in waiters { waiter.answer(result) }
    }

    /// Ends the flight without a result when every waiter's client has gone
    /// (Statistics.md `render.abandoned`), and says so; otherwise
    /// leaves it as it is. Atomic with `join`: a request joining at the same
    /// time either keeps the flight alive or, coming after, starts a new one.
    /// The waiters are dropped uncalled: nobody would read their answer, and
    /// a flight that ends here is never `complete`d, so none is called twice.
    func abandonIfDeserted(_ key: Key) -> Bool {
        let abandoned: Flight? = flights.withLock { table in
            guard let flight = table[key], flight.waiters.allSatisfy({ $0.clientGone?() == true }) else { return nil }
            return table.removeValue(forKey: key)
        }
        // Released outside the lock: the waiters' captures go with them.
        return abandoned != nil
    }

    /// Flights in progress (leak checks in tests).
    var inFlight: Int { flights.withLock { $0.count } }
}
