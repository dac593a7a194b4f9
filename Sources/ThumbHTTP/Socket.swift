import CThumbSys
import Glibc

/// The few socket syscalls the server needs, with errno turned into `SocketError`
/// in one place and EINTR retried.
public struct SocketError: Error, CustomStringConvertible, Sendable {
    public let operation: String
    public let errno: Int32
    public var description: String { "\(operation): \(String(cString: strerror(errno)))" }
}

enum Socket {
    static func check(_ result: Int32, _ operation: String) throws(SocketError) -> Int32 {
        if result < 0 { throw SocketError(operation: operation, errno: errno) }
        return result
    }

    static func setNonBlocking(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }

    /// Binds and listens; returns the descriptor (non-blocking, close-on-exec).
    static func listen(_ address: ListenAddress, backlog: Int32 = 1024) throws(SocketError) -> Int32 {
        switch address {
        case .inherited(let fd):
            setNonBlocking(fd)
            return fd
        case .unix(let path):
            let fd = try check(socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0), "socket")
            unlink(path)   // a stale socket file from an earlier run would make bind fail
            var addr = sockaddr_un()
            addr.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else {
                close(fd)
                throw SocketError(operation: "unix socket path too long", errno: ENAMETOOLONG)
            }
            withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: bytes + [0]) }
            let result = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            return try finish(fd, result, backlog)
        case .inet(let host, let port):
            let literal = host == "localhost" ? "127.0.0.1" : host
            var a4 = sockaddr_in(), a6 = sockaddr_in6()
            if inet_pton(AF_INET, literal, &a4.sin_addr) == 1 {
                a4.sin_family = sa_family_t(AF_INET)
                a4.sin_port = port.bigEndian
                let fd = try inetSocket(AF_INET)
                let result = withUnsafePointer(to: &a4) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                return try finish(fd, result, backlog)
            }
            guard inet_pton(AF_INET6, literal, &a6.sin6_addr) == 1 else {
                throw SocketError(operation: "listen address '\(host)' is not an IP literal", errno: EINVAL)
            }
            a6.sin6_family = sa_family_t(AF_INET6)
            a6.sin6_port = port.bigEndian
            let fd = try inetSocket(AF_INET6)
            let result = withUnsafePointer(to: &a6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
            return try finish(fd, result, backlog)
        }
    }

    private static func inetSocket(_ family: Int32) throws(SocketError) -> Int32 {
        let fd = try check(socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0), "socket")
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    private static func finish(_ fd: Int32, _ bindResult: Int32, _ backlog: Int32) throws(SocketError) -> Int32 {
        do {
            _ = try check(bindResult, "bind")
            _ = try check(Glibc.listen(fd, backlog), "listen")
        } catch {
            close(fd)
            throw error
        }
        setNonBlocking(fd)
        return fd
    }

    /// The port a listening socket is bound to (for port 0 in tests).
    static func boundPort(_ fd: Int32) -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let family = storage.ss_family
        return withUnsafePointer(to: &storage) { p -> UInt16 in
            if family == sa_family_t(AF_INET) {
                return p.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
            }
            return p.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
        }
    }
}
