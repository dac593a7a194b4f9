import Foundation
import Glibc

/// Loopback-only socket helpers: the tests reach nothing but 127.0.0.1 and ::1.
public enum Loopback {
    /// A `sockaddr_in` for 127.0.0.1:`port`.
    public static func address(port: UInt16) -> sockaddr_in {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        inet_pton(AF_INET, "127.0.0.1", &a.sin_addr)
        return a
    }

    /// The local port a socket is bound to (0 if unknown).
    public static func boundPort(_ fd: Int32) -> UInt16 {
        var a = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let r = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return r == 0 ? UInt16(bigEndian: a.sin_port) : 0
    }

    /// A listening TCP socket on 127.0.0.1:<ephemeral>, close-on-exec (a child
    /// only gets it through an explicit dup2). Returns (fd, port).
    public static func listeningSocket(backlog: Int32 = 64) -> (fd: Int32, port: UInt16)? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var a = address(port: 0)
        let bound = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, backlog) == 0 else { close(fd); return nil }
        return (fd, boundPort(fd))
    }

    /// Connects an IPv4 socket `fd` (its options set already) to `host`:`port`;
    /// `connect`'s result. Clients that need their own socket options use it.
    public static func connect(_ fd: Int32, host: String = "127.0.0.1", port: UInt16) -> Int32 {
        var a = address(port: port)
        inet_pton(AF_INET, host, &a.sin_addr)
        return withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    /// A TCP client socket connected to 127.0.0.1:`port`, reads timing out
    /// after `receiveTimeout` seconds; -1 when the connect fails. `source`, a
    /// loopback address such as 127.0.0.7, is the client's own address.
    public static func connect(port: UInt16, receiveTimeout: Int, source: String? = nil) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var tv = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        if let source {
            // IP_BIND_ADDRESS_NO_PORT (24): the port is chosen at connect, for
            // the whole 4-tuple, not searched for at bind among every socket.
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_IP), 24, &one, socklen_t(MemoryLayout<Int32>.size))
            var local = address(port: 0)
            inet_pton(AF_INET, source, &local.sin_addr)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                close(fd)
                return -1
            }
        }
        guard connect(fd, port: port) == 0 else {
            close(fd)
            return -1
        }
        return fd
    }
}
