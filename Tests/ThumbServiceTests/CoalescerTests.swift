import Dispatch
import Synchronization
import Testing
@testable import ThumbService

/// Collects what each waiter was handed, in the order it was handed.
private final class Outcomes: Sendable {
    private let results = Mutex<[(String, Result<Int, ServiceError>)]>([])

    func waiter(_ name: String) -> Coalescer<String, Int>.Waiter {
        { result in self.results.withLock { $0.append((name, result)) } }
    }

    var names: [String] { results.withLock { $0.map(\.0) } }
    var values: [Result<Int, ServiceError>] { results.withLock { $0.map(\.1) } }
}

@Suite struct CoalescerTests {
    @Test func firstCallerStartsAndJoinersShareItsResult() {
        let flights = Coalescer<String, Int>()
        let outcomes = Outcomes()
        #expect(flights.join("a", outcomes.waiter("first")))
        #expect(!flights.join("a", outcomes.waiter("second")))
        #expect(!flights.join("a", outcomes.waiter("third")))
        #expect(outcomes.names.isEmpty, "nobody hears anything before complete")
        flights.complete("a", with: .success(42))
        #expect(outcomes.names == ["first", "second", "third"])
        #expect(outcomes.values == [.success(42), .success(42), .success(42)])
    }

    @Test func errorsReachEveryWaiter() {
        let flights = Coalescer<String, Int>()
        let outcomes = Outcomes()
        #expect(flights.join("a", outcomes.waiter("first")))
        #expect(!flights.join("a", outcomes.waiter("second")))
        flights.complete("a", with: .failure(.sourceNotFound))
        #expect(outcomes.values == [.failure(.sourceNotFound), .failure(.sourceNotFound)])
    }

    @Test func keysAreIndependentAndCountedInFlight() {
        let flights = Coalescer<String, Int>()
        let outcomes = Outcomes()
        #expect(flights.inFlight == 0)
        #expect(flights.join("a", outcomes.waiter("a1")))
        #expect(flights.join("b", outcomes.waiter("b1")))
        #expect(!flights.join("a", outcomes.waiter("a2")))
        #expect(flights.inFlight == 2, "joiners do not add entries")
        flights.complete("b", with: .success(2))
        #expect(flights.inFlight == 1)
        #expect(outcomes.names == ["b1"], "completing b leaves a's waiters waiting")
        flights.complete("a", with: .success(1))
        #expect(flights.inFlight == 0)
        #expect(outcomes.values == [.success(2), .success(1), .success(1)])
    }

    @Test func aWaiterAfterCompletionStartsANewFlight() {
        let flights = Coalescer<String, Int>()
        let outcomes = Outcomes()
        #expect(flights.join("a", outcomes.waiter("old")))
        flights.complete("a", with: .failure(.originError("reset")))
        #expect(flights.join("a", outcomes.waiter("new")), "a finished flight is not joined")
        #expect(outcomes.names == ["old"], "the old result is not replayed to the new flight")
        flights.complete("a", with: .success(7))
        #expect(outcomes.values == [.failure(.originError("reset")), .success(7)])
        #expect(flights.inFlight == 0)
    }

    @Test func completingAKeyWithNoFlightDoesNothing() {
        let flights = Coalescer<String, Int>()
        flights.complete("nobody", with: .success(1))
        #expect(flights.inFlight == 0)
    }

    /// A waiter may start the next flight from inside its callback (a retry):
    /// the entry must already be gone, or the retry would join a dead flight.
    @Test func theEntryIsGoneBeforeWaitersRun() {
        let flights = Coalescer<String, Int>()
        let restarted = Mutex<Bool?>(nil)
        #expect(flights.join("a") { _ in
            restarted.withLock { $0 = flights.join("a") { _ in } }
        })
        flights.complete("a", with: .success(1))
        #expect(restarted.withLock { $0 } == true)
        #expect(flights.inFlight == 1)
        flights.complete("a", with: .success(2))
        #expect(flights.inFlight == 0)
    }

    @Test func manyThreadsJoiningAtOnceGetExactlyOneStarter() {
        let flights = Coalescer<String, Int>()
        let callers = 64
        let starters = Atomic<Int>(0)
        let delivered = Atomic<Int>(0)
        let everyone = DispatchGroup()
        // The threads all wait on one semaphore so the joins really overlap.
        let go = DispatchSemaphore(value: 0)
        let joined = DispatchGroup()
        for _ in 0..<callers {
            joined.enter()
            everyone.enter()
            DispatchQueue.global().async {
                go.wait()
                if flights.join("k", { result in
                    if case .success(9) = result { delivered.add(1, ordering: .relaxed) }
                    everyone.leave()
                }) {
                    starters.add(1, ordering: .relaxed)
                }
                joined.leave()
            }
        }
        for _ in 0..<callers { go.signal() }
        #expect(joined.wait(timeout: .now() + 10) == .success)
        #expect(starters.load(ordering: .relaxed) == 1)
        #expect(flights.inFlight == 1)
        flights.complete("k", with: .success(9))
        #expect(everyone.wait(timeout: .now() + 10) == .success)
        #expect(delivered.load(ordering: .relaxed) == callers)
        #expect(flights.inFlight == 0)
    }
}
