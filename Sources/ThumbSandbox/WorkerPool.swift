import Foundation

/// The worker processes of one engine: the idle ones, and how many exist at
/// all (busy, idle, starting or being reaped). At most `capacity` exist at any
/// moment (SPEC §16), replacements included: a job that finds no idle worker
/// starts one only while the count is below it, and otherwise waits for a
/// worker to come back or for a slot to free. Every render thread holds at most
/// one worker, so with `capacity` = the render threads a wait is short: a kill
/// being reaped, or a replacement on its way to the pool.
final class WorkerPool: @unchecked Sendable {
    // @unchecked: every field below is read and written under `condition` only.
    private let condition = NSCondition()
    private var idle: [Worker] = []
    private var live = 0
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// An idle worker, or a new one from `spawn` (which must call `release`
    /// once that worker has been reaped, or at once when it fails to start).
    func checkOut<Failure: Error>(spawn: () throws(Failure) -> Worker) throws(Failure) -> Worker {
        condition.lock()
        while true {
            if let worker = idle.popLast() {
                condition.unlock()
                return worker
            }
            if live < capacity {
                live += 1
                condition.unlock()
                return try spawn()
            }
            // Timed only as a safety net: every release and every return to the pool signals.
            _ = condition.wait(until: Date(timeIntervalSinceNow: 1))
        }
    }

    /// A slot for a replacement started ahead of need, if one is free now.
    func reserve() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard live < capacity else { return false }
        live += 1
        return true
    }

    /// Back into the pool; false when the pool is full (the caller ends the worker).
    func keep(_ worker: Worker) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard idle.count < capacity else { return false }
        idle.append(worker)
        condition.signal()
        return true
    }

    /// A worker's process has been reaped: its slot is free.
    func release() {
        condition.lock()
        live -= 1
        condition.broadcast()
        condition.unlock()
    }

    /// Empties the pool (a stopping daemon ends what it returns).
    func takeIdle() -> [Worker] {
        condition.lock()
        defer { condition.unlock() }
        defer { idle.removeAll() }
        return idle
    }

    /// The idle workers' process ids (tests: what a worker holds between jobs).
    var idlePIDs: [pid_t] {
        condition.lock()
        defer { condition.unlock() }
        return idle.map(\.process.pid)
    }
}
