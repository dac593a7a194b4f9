import Glibc

/// What to do when accept(2) fails (HTTPServer.md). Out of descriptors
/// (EMFILE, ENFILE) or kernel memory (ENOBUFS, ENOMEM), the connection stays
/// in the backlog and the listener stays readable: accepting again at once
/// would spin a CPU, so accepting pauses. One warning per burst, not one per
/// attempt: a burst ends after `quiet` without such a failure. Pure: the
/// time comes in, on whichever clock the caller reads (a manual one in tests).
struct AcceptFailures<C: Clock> where C.Duration == Duration {
    typealias Instant = C.Instant

    static var pause: Duration { .milliseconds(100) }
    static var quiet: Duration { .seconds(10) }

    /// Failures for want of resources since start.
    private(set) var total = 0
    /// Failures in the current burst (nil: none going on).
    private var burst: (count: Int, last: Instant)?

    struct Outcome: Equatable {
        /// A line to log at warning level, or nil while the burst is already reported.
        var warning: String?
        /// How long to stop accepting; nil for a failure that concerns only
        /// the one connection (it is gone; the next accept may work).
        var pause: Duration?
    }

    mutating func failed(errno code: Int32, now: Instant) -> Outcome {
        guard [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(code) else { return Outcome() }
        total += 1
        var outcome = Outcome(pause: Self.pause)
        if let b = burst, b.last.duration(to: now) < Self.quiet {
            burst = (b.count + 1, now)
        } else {
            let name = code == EMFILE ? "EMFILE" : code == ENFILE ? "ENFILE" : code == ENOBUFS ? "ENOBUFS" : "ENOMEM"
            let earlier = burst.map { " (the last burst: \($0.count) failed accepts)" } ?? ""
            outcome.warning = "accept: \(String(cString: strerror(code))) (\(name)); new connections wait in the "
                + "backlog, retried every \(Int(Self.pause / .milliseconds(1))) ms; raise the open-file limit or lower "
                + "http.maxConnections\(earlier)"
            burst = (1, now)
        }
        return outcome
    }
}
