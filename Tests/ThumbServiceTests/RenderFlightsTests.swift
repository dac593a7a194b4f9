import Synchronization
import Testing
@testable import ThumbService

/// The render-flight table on its own: waiters, priority and queued job under one lock.
struct RenderFlightsTests {
    typealias Flights = RenderFlights<String, Int>

    /// Collects what each waiter received.
    final class Results: Sendable {
        private let values = Mutex<[String: Result<Int, ServiceError>]>([:])
        func waiter(_ name: String) -> Flights.Waiter { { r in self.values.withLock { $0[name] = r } } }
        subscript(_ name: String) -> Result<Int, ServiceError>? { values.withLock { $0[name] } }
    }

    @Test func theFirstStartsLaterOnesJoinAndAllGetTheResult() {
        let flights = Flights(), results = Results()
        #expect(flights.join("a", priority: .live, promote: { _ in Issue.record("no promotion") }, results.waiter("1")))
        #expect(!flights.join("a", priority: .live, promote: { _ in Issue.record("no promotion") }, results.waiter("2")))
        #expect(flights.join("b", priority: .live, promote: { _ in }, results.waiter("3")))
        #expect(flights.inFlight == 2)
        flights.complete("a", with: .success(7))
        #expect(results["1"] == .success(7) && results["2"] == .success(7))
        #expect(results["3"] == nil)
        flights.complete("b", with: .failure(.overloaded))
        #expect(results["3"] == .failure(.overloaded))
        #expect(flights.inFlight == 0, "every flight's entry goes with it")
        // After completion the key starts afresh.
        #expect(flights.join("a", priority: .live, promote: { _ in }, results.waiter("4")))
    }

    @Test func aLiveJoinPromotesAQueuedPrefetchJobOnce() throws {
        let flights = Flights(), results = Results()
        let promoted = Mutex<[Int]>([])
        let promote: (Int) -> Void = { id in promoted.withLock { $0.append(id) } }
        #expect(flights.join("k", priority: .prefetch, promote: promote, results.waiter("p")))
        var submittedAt: RenderQueue.Priority?
        try flights.submit("k") { priority in submittedAt = priority; return 41 }
        #expect(submittedAt == .prefetch)
        #expect(!flights.join("k", priority: .prefetch, promote: promote, results.waiter("p2")))
        #expect(promoted.withLock { $0 } == [], "a prefetch joiner promotes nothing")
        #expect(!flights.join("k", priority: .live, promote: promote, results.waiter("l1")))
        #expect(!flights.join("k", priority: .live, promote: promote, results.waiter("l2")))
        #expect(promoted.withLock { $0 } == [41], "promoted by the first live joiner only")
    }

    @Test func aLiveJoinBeforeSubmissionMakesTheJobLive() throws {
        let flights = Flights(), results = Results()
        #expect(flights.join("k", priority: .prefetch, promote: { _ in Issue.record("nothing queued yet") }, results.waiter("p")))
        #expect(!flights.join("k", priority: .live, promote: { _ in Issue.record("nothing queued yet") }, results.waiter("l")))
        var submittedAt: RenderQueue.Priority?
        try flights.submit("k") { priority in submittedAt = priority; return 1 }
        #expect(submittedAt == .live)
    }

    @Test func aRefusedSubmissionLeavesTheFlightToBeCompleted() {
        let flights = Flights(), results = Results()
        #expect(flights.join("k", priority: .live, promote: { _ in }, results.waiter("1")))
        #expect(throws: ServiceError.overloaded) {
            try flights.submit("k") { _ throws(ServiceError) in throw .overloaded }
        }
        #expect(flights.inFlight == 1)
        flights.complete("k", with: .failure(.overloaded))
        #expect(results["1"] == .failure(.overloaded) && flights.inFlight == 0)
    }
}
