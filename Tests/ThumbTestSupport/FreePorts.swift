import Glibc
import Synchronization

extension Loopback {
    /// Ports handed out by `freePorts` in this process: two servers started
    /// at once by parallel suites never get the same one.
    private static let handedOut = Mutex<Set<UInt16>>([])

    /// A TCP port on 127.0.0.1 that is free now and stays free for a server
    /// started a while later (see `freePorts`).
    public static func freePort() -> UInt16 { freePorts(1)[0] }

    /// `count` distinct TCP ports on 127.0.0.1 that are free now and stay
    /// free for a server that binds them later: a thumbd binary a few hundred
    /// milliseconds after the pick, SeaweedFS its S3 port 3–9 s after it starts.
    ///
    /// A port bound to 0 and closed is an ephemeral one, which the kernel
    /// also hands to every outgoing connection as its source port: with the
    /// churn suites beside it making thousands of connections a second, the
    /// whole range comes round within seconds, and a server whose port was
    /// taken in the meantime cannot bind it (SeaweedFS exits at start, "bind:
    /// address already in use"). These come from below the kernel's ephemeral
    /// range (`/proc/sys/net/ipv4/ip_local_port_range`), which neither
    /// `connect` nor a bind to port 0 ever picks.
    public static func freePorts(_ count: Int) -> [UInt16] {
        let low = min(ephemeralRangeStart(), 65_535)
        // Too little room below the range: ephemeral ports, as before.
        guard low > 11_000 else { return (0..<count).map { _ in ephemeralPort() } }
        var picked: [UInt16] = []
        for _ in 0..<10_000 where picked.count < count {
            let candidate = UInt16.random(in: 10_000..<UInt16(low))
            let fresh = handedOut.withLock { taken in
                guard !taken.contains(candidate), isFree(candidate) else { return false }
                taken.insert(candidate)
                return true
            }
            if fresh { picked.append(candidate) }
        }
        precondition(picked.count == count, "no \(count) free ports below \(low)")
        return picked
    }

    /// The first port of the kernel's ephemeral range (32768 by default).
    public static func ephemeralRangeStart() -> Int {
        let fd = open("/proc/sys/net/ipv4/ip_local_port_range", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 32_768 }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = read(fd, &buffer, buffer.count)
        guard n > 0 else { return 32_768 }
        let text = String(decoding: buffer[..<n], as: UTF8.self)
        return text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first.flatMap { Int($0) } ?? 32_768
    }

    /// Whether 127.0.0.1:`port` can be bound now (without SO_REUSEADDR, so a
    /// port a connection in TIME_WAIT still holds counts as taken).
    private static func isFree(_ port: UInt16) -> Bool {
        guard let fd = boundSocket(port) else { return false }
        close(fd)
        return true
    }

    /// A port that was free a moment ago (bound to 0, read back, closed).
    private static func ephemeralPort() -> UInt16 {
        guard let fd = boundSocket(0) else { preconditionFailure("socket or bind: \(errno)") }
        defer { close(fd) }
        return boundPort(fd)
    }

    /// A TCP socket bound to 127.0.0.1:`port`, nil when that fails.
    private static func boundSocket(_ port: UInt16) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var a = address(port: port)
        let bound = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { close(fd); return nil }
        return fd
    }
}
