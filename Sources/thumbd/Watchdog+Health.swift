extension Watchdog {
    /// The watchdog's decision, without clocks, timers or sockets: each tick
    /// judges the heartbeat sent on the previous tick and the oldest render,
    /// then a new heartbeat is outstanding.
    struct Health: Equatable {
        enum Action: Equatable {
            /// Send `WATCHDOG=1`.
            case ping
            /// Send nothing; `log` is true the first time in a row, so a wedged
            /// process logs its reason once instead of every tick.
            case withhold(reason: String, log: Bool)
        }

        private(set) var heartbeatAnswered = true
        private var unhealthyLogged = false

        mutating func tick(oldestRender: Duration?) -> Action {
            var problem: String?
            if !heartbeatAnswered {
                problem = "an I/O queue did not answer the last heartbeat"
            } else if let age = oldestRender, age > Watchdog.maxRender {
                problem = "a render has been running for \(age.components.seconds) s"
            }
            heartbeatAnswered = false
            guard let problem else {
                unhealthyLogged = false
                return .ping
            }
            defer { unhealthyLogged = true }
            return .withhold(reason: problem, log: !unhealthyLogged)
        }

        /// Every I/O queue ran the heartbeat.
        mutating func answered() {
            heartbeatAnswered = true
        }
    }
}
