import Foundation
import ThumbHTTP

/// Times `RequestParser` on two heads: wrk's (request line and Host) and a
/// browser's asking for a signed thumbnail, then reads what a memory hit
/// reads (target, path, `Accept`, `If-None-Match`, keep-alive). Best of 30
/// runs of thread CPU time.
enum ParseBench {
    static let heads: [(name: String, text: String)] = [
        ("wrk", "GET /thumb.jpg HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"),
        ("browser", "GET /thumbnail?url=https%3A%2F%2Fimages.example.com%2Fcats%2Fa%20b.jpg&w=256&h=256&fit=cover&sig=Zm9vYmFyYmF6cXV4 HTTP/1.1\r\n"
            + "Host: localhost:8080\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n"
            + "Accept: image/avif,image/webp,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5\r\nAccept-Language: en-US,en;q=0.5\r\n"
            + "Accept-Encoding: gzip, deflate, br, zstd\r\nReferer: http://localhost:8080/gallery\r\nConnection: keep-alive\r\n"
            + "Sec-Fetch-Dest: image\r\nSec-Fetch-Mode: no-cors\r\nSec-Fetch-Site: same-origin\r\nIf-None-Match: \"3f2a9c\"\r\n"
            + "Priority: u=5, i\r\n\r\n"),
    ]

    static func run() {
        for (name, text) in heads {
            let bytes = Array(text.utf8)
            let count = 20_000
            var best = Double.infinity
            var checksum = 0
            for _ in 0..<30 {
                var parser = RequestParser()
                let start = threadCPUNanoseconds()
                for _ in 0..<count {
                    parser.append(bytes)
                    guard case .request(let r)? = parser.next() else { fatalError("\(name) did not parse") }
                    checksum &+= r.target.utf8.count &+ r.path.utf8.count &+ (r.header("Accept")?.utf8.count ?? 0)
                        &+ (r.header("If-None-Match")?.utf8.count ?? 0) &+ (r.keepAlive ? 1 : 0)
                }
                best = min(best, Double(threadCPUNanoseconds() - start) / Double(count))
            }
            print("\(name): \(Int(best.rounded())) ns per request (checksum \(checksum))")
        }
    }

    /// CPU time of this thread: time spent waiting for a core does not count,
    /// which matters on a machine shared with builds.
    static func threadCPUNanoseconds() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }
}
