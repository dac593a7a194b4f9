import Glibc
import Synchronization
import ThumbClock

/// The `Date` header value, formatted once per second rather than per
/// response, from the server's wall clock (a manual one in tests).
final class HTTPDate: Sendable {
    /// For serializing outside a server (tests of the head's bytes).
    static let system = HTTPDate(clock: SystemWallClock())

    private let clock: any WallClock
    private let cache = Mutex<(second: Int64, text: String)>((-1, ""))

    init(clock: any WallClock) {
        self.clock = clock
    }

    func now() -> String {
        let t = clock.wholeSecondsSinceEpoch()
        return cache.withLock { c in
            if c.second == t { return c.text }
            var seconds = time_t(t)
            var tm = Glibc.tm()
            gmtime_r(&seconds, &tm)
            var buffer = [CChar](repeating: 0, count: 64)
            let n = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &tm)
            c = (t, String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self))
            return c.text
        }
    }
}
