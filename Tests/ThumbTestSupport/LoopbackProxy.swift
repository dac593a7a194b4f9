import Foundation
import Glibc
import Synchronization

/// A TCP proxy on 127.0.0.1 in front of another loopback port (SeaweedFS in
/// the S3 tests), for what the store itself cannot be asked to do or tell:
/// it counts the connections made to it, keeps what clients sent (so a test
/// sees the request line and headers exactly as they went out), and, with
/// `stallAfter`, forwards only that many bytes of each response and then
/// holds the connection open without a word — a store stalling mid-body;
/// with `stallRequests`, a connection whose client starts a request with one
/// of those prefixes (`"PUT "`) goes silent from then on — a store that
/// takes writes and never answers them.
///
/// A thread per connection, everything bounded: at most `maxConnections`
/// connections, each kept at most `connectionSeconds` (or `holdSeconds`), and the accept loop
/// ends after `lifetimeSeconds` or `stop()`.
public final class LoopbackProxy: Sendable {
    public static let maxConnections = 64
    public static let connectionSeconds = 10.0
    public static let lifetimeSeconds = 120.0
    /// Bytes of each connection's client side kept for `sent`.
    public static let keptBytes = 65536

    public let port: UInt16
    private let shared: Shared

    private final class Shared: Sendable {
        let upstream: UInt16
        let stallAfter: Int?
        let stallRequests: [String]
        let holdSeconds: Double
        let stopped = Mutex(false)
        let accepted = Mutex(0)
        let sent = Mutex<[[UInt8]]>([])

        init(upstream: UInt16, stallAfter: Int?, stallRequests: [String], holdSeconds: Double) {
            self.holdSeconds = holdSeconds
            self.upstream = upstream
            self.stallAfter = stallAfter
            self.stallRequests = stallRequests
        }
        var isStopped: Bool { stopped.withLock { $0 } }
    }

    /// `stallAfter`: response bytes (head included) forwarded per connection
    /// before the proxy goes silent; nil forwards everything. `stallRequests`:
    /// request-line prefixes (`"PUT "`) that silence their connection.
    /// `holdSeconds`: how long a connection is kept at most.
    public init(upstream: UInt16, stallAfter: Int? = nil, stallRequests: [String] = [],
                holdSeconds: Double = connectionSeconds) throws {
        guard let (listener, port) = Loopback.listeningSocket() else { throw POSIXError(.EADDRINUSE) }
        self.port = port
        let shared = Shared(upstream: upstream, stallAfter: stallAfter, stallRequests: stallRequests,
                            holdSeconds: min(holdSeconds, Self.lifetimeSeconds))
        self.shared = shared
        Thread.detachNewThread { Self.acceptLoop(listener, shared) }
    }

    deinit { stop() }

    /// Stops accepting, and ends the connections within 100 ms.
    public func stop() { shared.stopped.withLock { $0 = true } }

    /// Connections accepted so far.
    public var connections: Int { shared.accepted.withLock { $0 } }

    /// What each connection's client sent (its first `keptBytes`), as text, in accept order.
    public var requests: [String] { shared.sent.withLock { $0.map { String(decoding: $0, as: UTF8.self) } } }

    private static func acceptLoop(_ listener: Int32, _ shared: Shared) {
        defer { close(listener) }
        let start = Date()
        var accepted = 0
        while accepted < maxConnections, Date().timeIntervalSince(start) < lifetimeSeconds, !shared.isStopped {
            var p = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 100) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            accepted += 1
            let index = shared.sent.withLock { sent in
                sent.append([])
                return sent.count - 1
            }
            shared.accepted.withLock { $0 += 1 }
            Thread.detachNewThread { relay(client, index, shared) }
        }
    }

    private static func relay(_ client: Int32, _ index: Int, _ shared: Shared) {
        defer { close(client) }
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard upstream >= 0 else { return }
        defer { close(upstream) }
        guard Loopback.connect(upstream, port: shared.upstream) == 0 else { return }
        let end = Date().addingTimeInterval(shared.holdSeconds)
        var forwarded = 0
        var silent = false
        var buffer = [UInt8](repeating: 0, count: 65536)
        var fds = [pollfd(fd: client, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: upstream, events: Int16(POLLIN), revents: 0)]
        while Date() < end, !shared.isStopped {
            // Once stalled, the upstream is no longer read: the client waits for bytes that never come.
            let stalled = silent || shared.stallAfter.map { forwarded >= $0 } ?? false
            fds[1].events = stalled ? 0 : Int16(POLLIN)
            fds[0].revents = 0
            fds[1].revents = 0
            guard poll(&fds, 2, 100) >= 0 else { if errno == EINTR { continue } else { return } }
            if fds[0].revents != 0 {
                let n = recv(client, &buffer, buffer.count, 0)
                if n <= 0 { return }
                shared.sent.withLock { sent in
                    let room = keptBytes - sent[index].count
                    if room > 0 { sent[index] += buffer[..<min(n, room)] }
                }
                if shared.stallRequests.contains(where: { buffer[..<n].starts(with: $0.utf8) }) { silent = true }
                if silent { continue }
                guard sendAll(upstream, buffer[..<n]) else { return }
            }
            if !stalled && fds[1].revents != 0 {
                var n = recv(upstream, &buffer, buffer.count, 0)
                if n <= 0 { return }
                if let limit = shared.stallAfter { n = min(n, limit - forwarded) }
                guard sendAll(client, buffer[..<n]) else { return }
                forwarded += n
            }
        }
    }

    private static func sendAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n > 0 { sent += n; continue }
            if n < 0 && errno == EINTR { continue }
            return false
        }
        return true
    }
}
