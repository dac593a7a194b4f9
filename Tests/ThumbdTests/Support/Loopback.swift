import Foundation
import Glibc

/// Loopback-only socket helpers shared by the process-level tests.
enum Loopback {
    /// A `sockaddr_in` for 127.0.0.1:`port`.
    static func address(port: UInt16) -> sockaddr_in {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        inet_pton(AF_INET, "127.0.0.1", &a.sin_addr)
        return a
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago (bound to 0, read back, closed).
    static func freePort() -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        precondition(fd >= 0, "socket: \(errno)")
        defer { close(fd) }
        var a = address(port: 0)
        _ = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        return boundPort(fd)
    }

    /// The local port a socket is bound to (0 if unknown).
    static func boundPort(_ fd: Int32) -> UInt16 {
        var a = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let r = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return r == 0 ? UInt16(bigEndian: a.sin_port) : 0
    }

    /// A listening TCP socket on 127.0.0.1:<ephemeral>, close-on-exec (a child
    /// only gets it through an explicit dup2). Returns (fd, port).
    static func listeningSocket(backlog: Int32 = 64) -> (fd: Int32, port: UInt16)? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var a = address(port: 0)
        let bound = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, backlog) == 0 else { close(fd); return nil }
        return (fd, boundPort(fd))
    }

    /// True when something accepts TCP connections on 127.0.0.1:`port` right now.
    static func isListening(_ port: UInt16, timeout: Double = 1) -> Bool {
        guard let c = HTTPConnection(port: port, timeout: timeout) else { return false }
        c.close()
        return true
    }
}
