import Foundation
import Synchronization
import Testing
import ThumbTestSupport
import ThumbService
@testable import thumbd

/// The watchdog's decisions without systemd or a wall clock: the pure
/// `Health`, then the driver with a hand-answered heartbeat and a real render
/// queue whose clock the test moves.
@Suite struct WatchdogTests {
    // MARK: Health

    @Test func aHealthyProcessPingsEveryTick() {
        var health = Watchdog.Health()
        for _ in 0..<3 {
            #expect(health.tick(oldestRender: nil) == .ping)
            health.answered()
        }
        #expect(health.tick(oldestRender: .milliseconds(119_900)) == .ping)
        health.answered()
        #expect(health.tick(oldestRender: .seconds(120)) == .ping, "the bound itself is still healthy")
    }

    @Test func anUnansweredHeartbeatWithholdsAndLogsOnce() {
        var health = Watchdog.Health()
        #expect(health.tick(oldestRender: nil) == .ping)
        let reason = "an I/O queue did not answer the last heartbeat"
        #expect(health.tick(oldestRender: nil) == .withhold(reason: reason, log: true))
        #expect(health.tick(oldestRender: nil) == .withhold(reason: reason, log: false))
        #expect(health.tick(oldestRender: nil) == .withhold(reason: reason, log: false))
        health.answered()
        #expect(health.tick(oldestRender: nil) == .ping, "a late answer is recovery")
    }

    @Test func aRenderRunningOverTheBoundWithholds() {
        var health = Watchdog.Health()
        #expect(health.tick(oldestRender: .milliseconds(121_500)) == .withhold(reason: "a render has been running for 121 s", log: true))
        health.answered()
        #expect(health.tick(oldestRender: .seconds(150)) == .withhold(reason: "a render has been running for 150 s", log: false))
        health.answered()
        #expect(health.tick(oldestRender: .milliseconds(200)) == .ping)
    }

    @Test func aProblemAfterRecoveryIsLoggedAgain() {
        var health = Watchdog.Health()
        #expect(health.tick(oldestRender: .seconds(200)) == .withhold(reason: "a render has been running for 200 s", log: true))
        health.answered()
        #expect(health.tick(oldestRender: nil) == .ping)
        // Heartbeat left unanswered this time.
        #expect(health.tick(oldestRender: nil)
                == .withhold(reason: "an I/O queue did not answer the last heartbeat", log: true))
    }

    @Test func theHeartbeatIsJudgedBeforeTheRender() {
        var health = Watchdog.Health()
        _ = health.tick(oldestRender: nil)
        #expect(health.tick(oldestRender: .seconds(500))
                == .withhold(reason: "an I/O queue did not answer the last heartbeat", log: true))
    }

    // MARK: interval

    @Test func intervalIsHalfWatchdogUsecForThisProcess() {
        #expect(Watchdog.interval(environment: ["WATCHDOG_USEC": "2000000"], pid: 42) == .seconds(1))
        #expect(Watchdog.interval(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "42"], pid: 42) == .seconds(15))
        #expect(Watchdog.interval(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "43"], pid: 42) == nil)
        #expect(Watchdog.interval(environment: [:], pid: 42) == nil)
        #expect(Watchdog.interval(environment: ["WATCHDOG_USEC": "0"], pid: 42) == nil)
        #expect(Watchdog.interval(environment: ["WATCHDOG_USEC": "soon"], pid: 42) == nil)
    }

    // MARK: The driver

    @Test func theDriverPingsWithholdsAndRecovers() throws {
        let rig = Rig()
        defer { rig.finish() }
        rig.watchdog.tick()
        #expect(rig.notified == ["WATCHDOG=1"])
        #expect(rig.pendingHeartbeats == 1)

        rig.watchdog.tick()   // the heartbeat was not answered
        #expect(rig.notified == ["WATCHDOG=1"])
        #expect(rig.logged == ["watchdog: withholding WATCHDOG=1: an I/O queue did not answer the last heartbeat"])
        rig.watchdog.tick()
        #expect(rig.logged.count == 1, "logged once while the problem lasts")

        rig.answerHeartbeats()
        rig.watchdog.tick()
        #expect(rig.notified == ["WATCHDOG=1", "WATCHDOG=1"])

        // A render stuck in a decode, aged on the queue's clock.
        try rig.startStuckRender()
        rig.answerHeartbeats()
        rig.clock.advance(by: .seconds(60))
        rig.watchdog.tick()
        #expect(rig.notified.count == 3, "a render running 60 s is legitimate")
        rig.answerHeartbeats()
        rig.clock.advance(by: .seconds(61))
        rig.watchdog.tick()
        #expect(rig.notified.count == 3)
        #expect(rig.logged.last == "watchdog: withholding WATCHDOG=1: a render has been running for 121 s")

        rig.releaseRender()
        rig.answerHeartbeats()
        rig.watchdog.tick()
        #expect(rig.notified.count == 4, "pings again once the render ended")
        #expect(rig.logged.count == 2)
    }
}

/// What the watchdog sent: heartbeats waiting for an answer, pings, log lines.
private final class Transcript: Sendable {
    let state = Mutex<(heartbeats: [@Sendable () -> Void], notified: [String], logged: [String])>(([], [], []))
}

/// A watchdog whose heartbeat the test answers, whose pings and log lines
/// are recorded, over a one-worker render queue on a manual clock.
private final class Rig: Sendable {
    let clock = ManualClock()
    let renders: RenderQueue
    let watchdog: Watchdog
    private let transcript = Transcript()
    private let gate = DispatchSemaphore(value: 0)

    init() {
        renders = RenderQueue(workers: 1, maxQueue: 4, memoryBudget: 1 << 20, clock: clock)
        watchdog = Watchdog(heartbeat: { [transcript] done in transcript.state.withLock { $0.heartbeats.append(done) } },
                            renders: renders,
                            notify: { [transcript] line in transcript.state.withLock { $0.notified.append(line) } },
                            log: { [transcript] line in transcript.state.withLock { $0.logged.append(line) } })
    }

    var notified: [String] { transcript.state.withLock { $0.notified } }
    var logged: [String] { transcript.state.withLock { $0.logged } }
    var pendingHeartbeats: Int { transcript.state.withLock { $0.heartbeats.count } }

    func answerHeartbeats() {
        for done in transcript.state.withLock({ s in defer { s.heartbeats = [] }; return s.heartbeats }) { done() }
    }

    /// Occupies the worker until `releaseRender`; waits (≤ 5 s) until it runs.
    func startStuckRender() throws {
        try renders.submit(cost: 1) { [gate] in gate.wait() }
        #expect(eventually { renders.statistics.active == 1 })
    }

    /// Lets the stuck render end and waits (≤ 5 s) until the worker is free.
    func releaseRender() {
        gate.signal()
        #expect(eventually { renders.statistics.active == 0 })
    }

    /// Ends the stuck render, lets the worker exit, and drops the heartbeats
    /// still waiting: each holds the watchdog, which holds the transcript
    /// that lists it, so left there they would keep the rig alive.
    func finish() {
        gate.signal()
        renders.shutdown()
        transcript.state.withLock { $0.heartbeats = [] }
    }
}
