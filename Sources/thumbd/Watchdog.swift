import Dispatch
import Foundation
import Glibc
import Synchronization
import ThumbHTTP
import ThumbService

/// systemd's watchdog (SPEC §10): `WATCHDOG=1` every half `WATCHDOG_USEC`,
/// but only while thumbd is really working — a timer alone would keep a
/// wedged process alive forever. Each tick checks that every I/O queue ran
/// the heartbeat sent on the previous tick, and that no render has been
/// running for longer than `maxRenderSeconds` (a worker stuck in a decode).
/// That bound is far above any legitimate render (a 50 MP progressive JPEG
/// takes about a second), so a slow image never gets the process restarted.
final class Watchdog: Sendable {
    static let maxRenderSeconds: Double = 120

    private struct State {
        var heartbeatAnswered = true
        var unhealthyLogged = false
    }

    private let server: HTTPServer
    private let renders: RenderQueue
    private let log: Log
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "thumbd.watchdog")
    nonisolated(unsafe) private var timer: DispatchSourceTimer?

    /// The ping interval from the environment, or nil when systemd asked for
    /// no watchdog (or asked another process: `WATCHDOG_PID`).
    static func interval(environment: [String: String], pid: Int32) -> Double? {
        guard let text = environment["WATCHDOG_USEC"], let usec = Int(text), usec > 0 else { return nil }
        if let owner = environment["WATCHDOG_PID"], Int32(owner) != pid { return nil }
        return Double(usec) / 2_000_000
    }

    init(server: HTTPServer, renders: RenderQueue, log: Log) {
        self.server = server
        self.renders = renders
        self.log = log
    }

    func start(every seconds: Double) {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: seconds, leeway: .milliseconds(10))
        timer.setEventHandler { [self] in tick() }
        self.timer = timer
        timer.resume()
    }

    private func tick() {
        let oldestRender = renders.oldestRunningSeconds ?? 0
        let verdict: String? = state.withLock { s in
            var problem: String?
            if !s.heartbeatAnswered {
                problem = "an I/O queue did not answer the last heartbeat"
            } else if oldestRender > Self.maxRenderSeconds {
                problem = "a render has been running for \(Int(oldestRender)) s"
            }
            s.heartbeatAnswered = false
            return problem
        }
        server.heartbeat { [self] in state.withLock { $0.heartbeatAnswered = true } }
        if let verdict {
            let first = state.withLock { s in defer { s.unhealthyLogged = true }; return !s.unhealthyLogged }
            if first { log.write(.error, "watchdog: withholding WATCHDOG=1: \(verdict)") }
            return
        }
        state.withLock { $0.unhealthyLogged = false }
        SystemdNotifier.notify("WATCHDOG=1")
    }
}
