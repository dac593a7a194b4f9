import Foundation
import Glibc
import Synchronization

/// Loopback clients that each open a connection, send one request that
/// closes it (`Connection: close`, or HTTP/1.0), read the answer to the end
/// and close, as fast as they can: the churn that reuses descriptor numbers
/// at the highest rate. Each client is a thread at the lowest priority
/// (nice 19), so the churn takes the CPU the tests running beside it leave.
public enum ConnectionChurn {
    public struct Outcome: Sendable, CustomStringConvertible {
        /// Exchanges that got the expected answer.
        public var answered = 0
        /// Exchanges that did not (connect refused, reset, timeout, other answer).
        public var failed = 0
        /// The first failure, for the message.
        public var firstFailure: String?
        public var seconds = 0.0
        public var perSecond: Double { seconds > 0 ? Double(answered) / seconds : 0 }
        public var description: String {
            "\(answered) answered, \(failed) failed in \(String(format: "%.1f", seconds)) s "
                + "(\(Int(perSecond))/s)" + (firstFailure.map { "; first failure: \($0)" } ?? "")
        }
    }

    /// Runs `clients` threads against 127.0.0.1:`port` until `seconds` pass
    /// or `maxExchanges` (in all) are done, whichever comes first. Each
    /// exchange asks for `target` and expects `status` with a body ending
    /// in `bodySuffix`.
    public static func run(port: UInt16, clients: Int, seconds: Double, maxExchanges: Int,
                           target: String = "/healthz", status: Int = 200, bodySuffix: String = "ok") -> Outcome {
        let outcome = Mutex(Outcome())
        let started = Date()
        let deadline = started.addingTimeInterval(seconds)
        let perClient = max(1, maxExchanges / max(1, clients))
        let done = DispatchGroup()
        for client in 0..<clients {
            done.enter()
            let thread = Thread {
                defer { done.leave() }
                // Linux: PRIO_PROCESS with 0 is the calling thread only.
                setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
                var mine = Outcome()
                var i = 0
                while i < perClient, Date() < deadline {
                    // Alternate the two ways of asking for a close; vary per client.
                    let http10 = (i + client) % 2 == 1
                    // Source addresses spread over 127.0.1.1–250 (127.0.0.2 is
                    // the fetch tests' "internal" listener's): the server
                    // closes first, so each connection leaves a TIME_WAIT on
                    // its side for 60 s, and at thousands a second from one
                    // address the ephemeral ports (28 000) come round within
                    // seconds onto those tuples; 250 addresses keep every
                    // tuple fresh. (The resets CI saw here came from another
                    // test closing a descriptor twice, not from these tuples:
                    // .ci/double-closes.sh now catches that.)
                    let source = "127.0.1.\(1 + (i * clients + client) % 250)"
                    switch exchange(port: port, source: source, target: target, http10: http10, status: status,
                                    bodySuffix: bodySuffix) {
                    case nil: mine.answered += 1
                    case let failure?:
                        mine.failed += 1
                        if mine.firstFailure == nil { mine.firstFailure = failure }
                    }
                    i += 1
                }
                outcome.withLock {
                    $0.answered += mine.answered
                    $0.failed += mine.failed
                    if $0.firstFailure == nil { $0.firstFailure = mine.firstFailure }
                }
            }
            thread.start()
        }
        // Each exchange is bounded by the 10 s receive timeout.
        _ = done.wait(timeout: .now() + seconds + 30)
        return outcome.withLock {
            $0.seconds = Date().timeIntervalSince(started)
            return $0
        }
    }

    /// One connection, one request, the answer read to end of file; nil if
    /// it was the expected one, else what went wrong.
    private static func exchange(port: UInt16, source: String, target: String, http10: Bool, status: Int,
                                 bodySuffix: String) -> String? {
        let fd = Loopback.connect(port: port, receiveTimeout: 10, source: source)
        guard fd >= 0 else { return "connect: \(String(cString: strerror(errno)))" }
        defer { close(fd) }
        let request = http10 ? "GET \(target) HTTP/1.0\r\n\r\n"
                             : "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        let bytes = Array(request.utf8)
        guard send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else {
            return "send: \(String(cString: strerror(errno)))"
        }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return "recv after \(received.count) bytes: \(String(cString: strerror(errno)))" }
            if n == 0 { break }
            received += chunk[0..<n]
        }
        let text = String(decoding: received, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 \(status) "), text.hasSuffix(bodySuffix) else {
            return "answer: \(text.prefix(120).debugDescription)"
        }
        return nil
    }
}
