import Foundation
import Glibc

/// A test-owned `$NOTIFY_SOCKET`: an AF_UNIX datagram socket bound to a short
/// path under /tmp (sun_path holds 108 bytes), standing in for systemd.
///
/// Each datagram may carry several newline-separated assignments
/// (`RELOADING=1\nMONOTONIC_USEC=123`); they are split and handed out one by
/// one, in arrival order, by `next(timeout:)` / `waitFor(_:timeout:)`.
/// `received` keeps every assignment seen so far, with its arrival time.
final class NotifySocket {
    struct Message: CustomStringConvertible {
        let line: String
        /// Seconds since the socket was created (monotonic clock).
        let at: Double
        var description: String { String(format: "%.3f %@", at, line) }
    }

    /// Path to hand to the child as `NOTIFY_SOCKET`.
    let path: String
    private let directory: String
    private let fd: Int32
    private let clock = ContinuousClock()
    private let born: ContinuousClock.Instant
    private var pending: [Message] = []
    /// Every assignment received so far (consumed or not), oldest first.
    private(set) var received: [Message] = []

    init() throws {
        var template = Array("/tmp/thumbd-n-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        directory = String(cString: made)
        path = directory + "/s"
        born = clock.now
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { rmdir(directory); throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        precondition(bytes.count < MemoryLayout.size(ofValue: addr.sun_path), "notify socket path too long: \(path)")
        withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: bytes) }
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard r == 0 else {
            let e = errno
            Glibc.close(fd); rmdir(directory)
            throw POSIXError(.init(rawValue: e) ?? .EIO)
        }
    }

    deinit {
        Glibc.close(fd)
        unlink(path)
        rmdir(directory)
    }

    /// Seconds since the socket was created (monotonic), the clock of `Message.at`.
    var elapsed: Double {
        let d = clock.now - born
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    /// Reads at most one datagram, waiting at most `timeout` seconds. Returns false on timeout.
    private func receiveOne(timeout: Double) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ms = Int32(max(0, min(timeout, 60)) * 1000)
        guard poll(&p, 1, ms) > 0, p.revents & Int16(POLLIN) != 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        guard n > 0 else { return n == 0 }
        let at = elapsed
        let text = String(decoding: buffer[..<n], as: UTF8.self)
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let m = Message(line: String(line), at: at)
            pending.append(m)
            received.append(m)
        }
        return true
    }

    /// The next assignment with its arrival time, or nil when none arrives within `timeout` seconds.
    func nextMessage(timeout: Double) -> Message? {
        let deadline = elapsed + timeout
        for _ in 0..<10_000 {   // bounded; each pass waits or consumes
            if !pending.isEmpty { return pending.removeFirst() }
            let left = deadline - elapsed
            if left <= 0 { return nil }
            _ = receiveOne(timeout: left)
        }
        return nil
    }

    /// The next assignment (`READY=1`), or nil when none arrives within `timeout` seconds.
    func next(timeout: Double) -> String? { nextMessage(timeout: timeout)?.line }

    /// Consumes assignments until `line` arrives (true) or `timeout` seconds pass (false).
    /// `abort` is checked every 100 ms while nothing arrives (e.g. "the daemon died"),
    /// so a dead child fails a test at once instead of after the whole timeout.
    func waitFor(_ line: String, timeout: Double, abort: (() -> Bool)? = nil) -> Bool {
        let deadline = elapsed + timeout
        for _ in 0..<100_000 {
            let left = deadline - elapsed
            if left <= 0 { return false }
            if let m = nextMessage(timeout: min(left, 0.1)) {
                if m.line == line { return true }
            } else if let abort, abort() {
                // One last look: the line may have been sent just before the exit.
                while let m = nextMessage(timeout: 0.05) { if m.line == line { return true } }
                return false
            }
        }
        return false
    }

    /// Everything received so far, one assignment per line, for failure messages.
    var transcript: String { received.map(\.description).joined(separator: " | ") }
}
