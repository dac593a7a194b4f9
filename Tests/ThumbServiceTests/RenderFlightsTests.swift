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

    /// A client's connection, as `Responder.isCancelled` shows it.
    final class ClientFlag: Sendable {
        private let left = Atomic(false)
        var gone: Bool { left.load(ordering: .acquiring) }
        func leave() { left.store(true, ordering: .releasing) }
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

    /// Statistics.md `render.abandoned`: only a flight whose every
    /// waiter's client has gone ends, atomically, with no waiter called.
    @Test func aFlightEndsUncalledOnlyWhenEveryClientHasGone() {
        let flights = Flights(), results = Results()
        let first = ClientFlag(), second = ClientFlag()
        let firstGone: Flights.ClientGone = { first.gone }, secondGone: Flights.ClientGone = { second.gone }
        #expect(flights.join("k", priority: .live, clientGone: firstGone, promote: { _ in }, results.waiter("1")))
        #expect(!flights.join("k", priority: .live, clientGone: secondGone, promote: { _ in }, results.waiter("2")))
        #expect(!flights.abandonIfDeserted("k"), "both clients are there")
        first.leave()
        #expect(!flights.abandonIfDeserted("k"), "one client is still there")
        second.leave()
        #expect(flights.abandonIfDeserted("k"))
        #expect(flights.inFlight == 0 && results["1"] == nil && results["2"] == nil)
        #expect(!flights.abandonIfDeserted("k"), "nothing left to abandon")
        // The key starts afresh, and completing the new flight reaches only its own waiter.
        #expect(flights.join("k", priority: .live, promote: { _ in }, results.waiter("3")))
        flights.complete("k", with: .success(1))
        #expect(results["3"] == .success(1) && results["1"] == nil)
    }

    @Test func aWaiterWithoutAClientKeepsTheFlight() {
        let flights = Flights(), results = Results()
        #expect(flights.join("p", priority: .prefetch, promote: { _ in }, results.waiter("prefetch")))
        let gone: Flights.ClientGone = { true }
        #expect(!flights.join("p", priority: .live, clientGone: gone, promote: { _ in }, results.waiter("gone")))
        #expect(!flights.abandonIfDeserted("p"), "the prefetch waiter has no client to lose")
        #expect(flights.inFlight == 1)
        flights.complete("p", with: .success(2))
        #expect(results["prefetch"] == .success(2) && results["gone"] == .success(2))
    }
}
