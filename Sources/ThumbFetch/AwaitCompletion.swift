import Dispatch
import Synchronization

/// Runs an operation that answers through a completion and waits for it on a
/// semaphore: the blocking form of a download, for tests and tools. Never call
/// it on a thread the completion needs (a fetcher's engine thread).
public func awaitCompletion<T: Sendable, E: Error>(
    _ start: (@escaping @Sendable (Result<T, E>) -> Void) -> Void) throws(E) -> T {
    let outcome = Mutex<Result<T, E>?>(nil)
    let done = DispatchSemaphore(value: 0)
    start { result in
        outcome.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    return try outcome.withLock { $0! }.get()
}
