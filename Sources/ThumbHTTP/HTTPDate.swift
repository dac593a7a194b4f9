import Glibc
import Synchronization

/// The `Date` header value, formatted once per second rather than per response.
enum HTTPDate {
    private static let cache = Mutex<(second: Int, text: String)>((-1, ""))

    static func now() -> String {
        let t = time(nil)
        return cache.withLock { c in
            if c.second == t { return c.text }
            var seconds = t
            var tm = Glibc.tm()
            gmtime_r(&seconds, &tm)
            var buffer = [CChar](repeating: 0, count: 64)
            let n = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &tm)
            c = (t, String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self))
            return c.text
        }
    }
}
