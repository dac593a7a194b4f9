import Dispatch
import Foundation
import Synchronization
import ThumbClock
import ThumbHTTP
import ThumbService

/// systemd's watchdog (ServiceLife.md): `WATCHDOG=1` every half `WATCHDOG_USEC`,
/// but only while thumbd is really working — a timer alone would keep a
/// wedged process alive forever. Each tick checks that every I/O queue ran
/// the heartbeat sent on the previous tick, and that no render has been
/// running for longer than `maxRender` (a worker stuck in a decode).
/// That bound is far above any legitimate render (a 50 MP progressive JPEG
/// takes about a second), so a slow image never gets the process restarted.
///
/// The decision is `Health`; this class only drives it. Render ages come from
/// the render queue's own clock, so a test ages a render by moving that clock.
final class Watchdog: Sendable {
    static let maxRender = Duration.seconds(120)

    /// Runs `done` once every I/O queue has run it (`HTTPServer.heartbeat`).
    typealias Heartbeat = @Sendable (_ done: @escaping @Sendable () -> Void) -> Void

    private let heartbeat: Heartbeat
    private let renders: RenderQueue
    private let notify: @Sendable (String) -> Void
    private let log: @Sendable (String) -> Void
    private let health = Mutex(Health())
    private let queue = DispatchQueue(label: "thumbd.watchdog")
    nonisolated(unsafe) private var timer: DispatchSourceTimer?

    /// The ping interval from the environment, or nil when systemd asked for
    /// no watchdog (or asked another process: `WATCHDOG_PID`).
    static func interval(environment: [String: String], pid: Int32) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let usec = Int(text), usec > 0 else { return nil }
        if let owner = environment["WATCHDOG_PID"], Int32(owner) != pid { return nil }
        return .microseconds(usec) / 2
    }

    init(heartbeat: @escaping Heartbeat, renders: RenderQueue, notify: @escaping @Sendable (String) -> Void,
         log: @escaping @Sendable (String) -> Void) {
        self.heartbeat = heartbeat
        self.renders = renders
        self.notify = notify
        self.log = log
    }

    convenience init(server: HTTPServer, renders: RenderQueue, log: Log) {
        self.init(heartbeat: { server.heartbeat($0) }, renders: renders,
                  notify: { SystemdNotifier.notify($0) }, log: { log.write(.error, $0) })
    }

    /// The ticks are a Dispatch timer (an I/O driver, like the connections'
    /// timers); what they judge runs on the render queue's clock.
    func start(every interval: Duration) {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: interval.dispatchInterval, leeway: .milliseconds(10))
        timer.setEventHandler { [self] in tick() }
        self.timer = timer
        timer.resume()
    }

    /// One timer tick: judge, send the next heartbeat, then ping or log.
    func tick() {
        let oldestRender = renders.oldestRunning
        let action = health.withLock { $0.tick(oldestRender: oldestRender) }
        heartbeat { [self] in health.withLock { $0.answered() } }
        switch action {
        case .ping: notify("WATCHDOG=1")
        case .withhold(let reason, log: true): log("watchdog: withholding WATCHDOG=1: \(reason)")
        case .withhold: break
        }
    }
}
