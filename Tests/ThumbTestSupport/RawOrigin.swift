import Foundation
import Glibc
import Synchronization

/// A hostile origin on a raw TCP socket on 127.0.0.1 (ephemeral port): unlike
/// `TestOrigin` it can misbehave at the byte level — reset mid-body, lie about
/// its length, stream forever, drip, or not speak HTTP at all. The fault is
/// chosen by the request path. A thread per connection; everything is bounded:
/// at most `maxConnections` connections, each served for at most
/// `connectionSeconds`, and the accept loop ends after `lifetimeSeconds` or `stop()`.
public final class RawOrigin: Sendable {
    public static let maxConnections = 64
    public static let connectionSeconds = 5.0
    public static let lifetimeSeconds = 120.0

    public let port: UInt16
    private let shared: Shared

    /// What the connection threads share with the test: hit counts, and how
    /// long each path's last connection was served (until the peer went away,
    /// the script ended, or the per-connection bound).
    public final class Shared: Sendable {
        public let hits = HitCounter()
        public let stopped = Mutex(false)
        public let served = Mutex<[String: Double]>([:])
        /// Body bytes sent so far by the `/almost/N` scripts, by path.
        public let sent = Mutex<[String: Int]>([:])
    }

    public init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.EMFILE) }
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, "127.0.0.1", &a.sin_addr)
        let bound = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(listener, 64) == 0 else {
            close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = UInt16(bigEndian: a.sin_port)
        let shared = Shared()
        self.shared = shared
        Thread.detachNewThread { Self.acceptLoop(listener, shared) }
    }

    deinit { stop() }

    /// Stops accepting (the accept loop notices within 100 ms and closes the listener).
    public func stop() { shared.stopped.withLock { $0 = true } }

    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }
    public func hits(_ path: String) -> Int { shared.hits.count(path) }
    /// Seconds the last connection for `path` was served; nil while it still is.
    public func servedSeconds(_ path: String) -> Double? { shared.served.withLock { $0[path] } }

    /// Body bytes the `/almost/N` connections for `path` have sent so far (all of them together).
    public func sentBytes(_ path: String) -> Int { shared.sent.withLock { $0[path] ?? 0 } }

    /// Waits (bounded) until the last connection for `path` is over; its duration.
    public func waitServed(_ path: String, timeout: Double = 6) -> Double? {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if let s = servedSeconds(path) { return s }
            usleep(20_000)
        }
        return nil
    }

    // MARK: - Connections

    private static func acceptLoop(_ listener: Int32, _ shared: Shared) {
        defer { close(listener) }
        let start = Date()
        var accepted = 0
        while accepted < maxConnections, Date().timeIntervalSince(start) < lifetimeSeconds,
              !shared.stopped.withLock({ $0 }) {
            var p = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 100) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            accepted += 1
            Thread.detachNewThread { serve(client, shared) }
        }
    }

    private static func serve(_ fd: Int32, _ shared: Shared) {
        let start = Date()
        let deadline = start.addingTimeInterval(connectionSeconds)
        // Every blocking call returns within a second, so the deadline is checked often.
        var tv = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        guard let path = readRequestPath(fd, deadline: deadline) else {
            close(fd)
            return
        }
        shared.hits.hit(path)
        shared.served.withLock { $0[path] = nil }
        let abortive = script(path, fd, deadline: deadline, shared: shared)
        if abortive {
            // RST instead of FIN: SO_LINGER {on, 0 s} then close.
            var l = linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, socklen_t(MemoryLayout<linger>.size))
        } else {
            // FIN, then wait (bounded) for the peer to close so no unread byte turns it into a RST.
            shutdown(fd, Int32(SHUT_WR))
            drain(fd, until: min(deadline, Date().addingTimeInterval(1)))
        }
        close(fd)
        let seconds = Date().timeIntervalSince(start)
        shared.served.withLock { $0[path] = seconds }
    }

    /// Plays the fault for `path`; true to end with a reset.
    private static func script(_ path: String, _ fd: Int32, deadline: Date, shared: Shared) -> Bool {
        if path.hasPrefix("/almost/"), let size = Int(path.dropFirst("/almost/".count)), size > 0 {
            // Announces `size` bytes, sends all but the last from one reused
            // 64 KiB buffer (the test process must not hold the body itself),
            // then stalls until the peer gives up.
            _ = write(fd, deadline, head(["Content-Length: \(size)", "Content-Type: image/jpeg"]))
            let chunk = filler(65536)
            var left = size - 1
            while left > 0, Date() < deadline {
                let n = min(left, chunk.count)
                guard write(fd, deadline, Array(chunk[..<n])) else { break }
                left -= n
                shared.sent.withLock { $0[path, default: 0] += n }
            }
            drain(fd, until: deadline)
            return false
        }
        switch path {
        case "/reset":
            // Announces 100 000 bytes, sends 1 000, then resets the connection.
            _ = write(fd, deadline, head(["Content-Length: 100000", "Content-Type: image/jpeg"]) + filler(1000))
            usleep(50_000)
            return true
        case "/short":
            // Announces 50 000 bytes, sends the first 1 000 of a real JPEG, then a clean FIN.
            _ = write(fd, deadline, head(["Content-Length: 50000", "Content-Type: image/jpeg"]) + Array(jpeg.prefix(1000)))
        case "/endless-chunked":
            _ = write(fd, deadline, head(["Transfer-Encoding: chunked", "Content-Type: image/jpeg"]))
            let chunk = Array("10000\r\n".utf8) + filler(65536) + Array("\r\n".utf8)
            while Date() < deadline, write(fd, deadline, chunk) {}
        case "/endless":
            // No length at all: the body ends when the connection does, which is never.
            _ = write(fd, deadline, head(["Content-Type: image/jpeg"]))
            let chunk = filler(65536)
            while Date() < deadline, write(fd, deadline, chunk) {}
        case "/drip":
            _ = write(fd, deadline, head(["Content-Length: 100000", "Content-Type: image/jpeg"]))
            for _ in 0..<50 where Date() < deadline {   // 10 bytes every 100 ms, 5 s at most
                guard write(fd, deadline, filler(10)) else { break }
                usleep(100_000)
            }
        case "/stall":
            // Accepts, reads the request, never answers (waits for the peer to give up).
            drain(fd, until: deadline)
        case "/garbage":
            _ = write(fd, deadline, Array("HELLO\r\n\r\n".utf8))
        case "/silent-close":
            break
        case "/huge-head":
            // A response head that never ends: 70 KiB of one header line.
            _ = write(fd, deadline, Array("HTTP/1.1 200 OK\r\nX-Pad: ".utf8) + [UInt8](repeating: 0x61, count: 70_000))
            drain(fd, until: deadline)
        case "/long-header-line":
            // One header line of 1 MiB: past libcurl's own cap on a line (CURL_MAX_HTTP_HEADER, 100 KiB).
            _ = write(fd, deadline, Array("HTTP/1.1 200 OK\r\nX-Pad: ".utf8) + [UInt8](repeating: 0x61, count: 1 << 20)
                      + Array("\r\nContent-Length: 0\r\n\r\n".utf8))
            drain(fd, until: deadline)
        case "/bad-length":
            _ = write(fd, deadline, head(["Content-Length: 12abc"]) + jpeg)
        case "/plus-length":
            // "+N" is not 1*DIGIT, even when N is the right length.
            _ = write(fd, deadline, head(["Content-Length: +\(jpeg.count)", "Content-Type: image/jpeg"]) + jpeg)
        case "/two-lengths":
            // Differing Content-Length fields: invalid framing (RFC 9112 §6.3), whatever the body.
            _ = write(fd, deadline, head(["Content-Length: 10", "Content-Length: \(jpeg.count)", "Content-Type: image/jpeg"]) + jpeg)
        case "/chunk-overflow":
            // A first chunk of 1 byte, then a chunk size of Int.max.
            _ = write(fd, deadline, head(["Transfer-Encoding: chunked"]) + Array("1\r\nX\r\n7fffffffffffffff\r\n".utf8) + filler(1000))
            drain(fd, until: deadline)
        case "/huge-pixels":
            let png = hugePNG
            _ = write(fd, deadline, head(["Content-Length: \(png.count)", "Content-Type: image/png"]) + png)
        case "/ok.jpg":
            _ = write(fd, deadline, head(["Content-Length: \(jpeg.count)", "Content-Type: image/jpeg"]) + jpeg)
        default:
            _ = write(fd, deadline, Array("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
        }
        return false
    }

    public static let jpeg = TestOrigin.jpeg

    /// A PNG that is only a signature, an IHDR claiming 30000×30000 RGBA (valid
    /// CRCs), an IDAT without pixels and an IEND: 900 megapixels announced in 65 bytes.
    public static let hugePNG: [UInt8] = {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return be32(UInt32(data.count)) + body + be32(crc32(body))
        }
        let ihdr = be32(30000) + be32(30000) + [8, 6, 0, 0, 0]   // 8-bit RGBA, deflate, no filter, no interlace
        let idat: [UInt8] = [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]   // an empty zlib stream: no pixel at all
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", ihdr) + chunk("IDAT", idat) + chunk("IEND", [])
    }()

    public static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 255), UInt8(v >> 8 & 255), UInt8(v & 255)] }

    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    private static func head(_ headers: [String]) -> [UInt8] {
        Array(("HTTP/1.1 200 OK\r\n" + headers.map { $0 + "\r\n" }.joined() + "Connection: close\r\n\r\n").utf8)
    }

    private static func filler(_ n: Int) -> [UInt8] { [UInt8](repeating: 0xFF, count: n) }

    /// The request head's path; nil if no complete head came within the deadline.
    private static func readRequestPath(_ fd: Int32, deadline: Date) -> String? {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let marker: [UInt8] = [13, 10, 13, 10]
        while buffer.firstRange(of: marker) == nil {
            guard Date() < deadline, buffer.count < 16384 else { return nil }
            let n = recv(fd, &chunk, chunk.count, 0)
            if n > 0 { buffer += chunk[0..<n]; continue }
            if n < 0 && (errno == EAGAIN || errno == EINTR) { continue }
            return nil
        }
        let line = String(decoding: buffer.prefix { $0 != 13 }, as: UTF8.self).split(separator: " ")
        guard line.count >= 2 else { return nil }
        return String(line[1].split(separator: "?", maxSplits: 1).first ?? line[1])
    }

    /// Sends everything; false once the peer is gone or at the deadline. A peer
    /// that stops reading without closing is waited for until the deadline, so
    /// `servedSeconds` shows when the client really let go of the connection.
    private static func write(_ fd: Int32, _ deadline: Date, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n > 0 { sent += n; continue }
            if n < 0 && (errno == EINTR || errno == EAGAIN) && Date() < deadline { continue }
            return false
        }
        return true
    }

    /// Reads and discards until the peer closes or `until`.
    private static func drain(_ fd: Int32, until: Date) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while Date() < until {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n == 0 { return }
            if n < 0 && errno != EAGAIN && errno != EINTR { return }
        }
    }
}
