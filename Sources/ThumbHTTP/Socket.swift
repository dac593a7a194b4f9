import CThumbSys
import Glibc

/// The few socket syscalls the server needs, with errno turned into `SocketError`
/// in one place and EINTR retried.
public struct SocketError: Error, CustomStringConvertible, Sendable {
    public let operation: String
    public let errno: Int32
    public var description: String { "\(operation): \(String(cString: strerror(errno)))" }
}

/// What a non-blocking read or write did: `wouldBlock` (EAGAIN) is an ordinary
/// outcome, not an error (as NIO's `IOResult`).
enum IOResult: Equatable {
    case processed(Int)
    case wouldBlock
}

enum Socket {
    /// Runs a syscall again while it fails with EINTR (a signal arrived before
    /// it did anything); any other result, -1 and errno included, is returned.
    /// close(2) must not go through here: on Linux it releases the descriptor
    /// even when interrupted, so a retry could close someone else's.
    @inline(__always)
    static func retryingOnInterrupt<T: FixedWidthInteger>(_ call: () -> T) -> T {
        while true {
            let result = call()
            if result != -1 || errno != EINTR { return result }
        }
    }

    /// The one place where -1/errno becomes a `SocketError`; EINTR is retried.
    static func check(_ operation: String, _ call: () -> Int32) throws(SocketError) -> Int32 {
        let result = retryingOnInterrupt(call)
        if result < 0 { throw SocketError(operation: operation, errno: errno) }
        return result
    }

    /// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC; nil when no connection is waiting.
    static func accept(_ listener: Int32) throws(SocketError) -> Int32? {
        let fd = retryingOnInterrupt { thumbd_accept_nonblocking(listener, nil, nil) }
        if fd >= 0 { return fd }
        if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
        throw SocketError(operation: "accept", errno: errno)
    }

    /// One read(2) into `buffer`; `.processed(0)` is end of file.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SocketError) -> IOResult {
        let n = retryingOnInterrupt { Glibc.read(fd, buffer.baseAddress, buffer.count) }
        if n >= 0 { return .processed(n) }
        if errno == EAGAIN || errno == EWOULDBLOCK { return .wouldBlock }
        throw SocketError(operation: "read", errno: errno)
    }

    /// One gathering write of up to `count` buffers: sendmsg(2) rather than
    /// writev(2), for MSG_NOSIGNAL. A client gone makes the write fail with
    /// EPIPE instead of raising SIGPIPE, which would end a process that has
    /// not ignored it (thumbd does; an embedding process or the tests need
    /// not). Writing after the client's end of stream (half-close) made
    /// that common.
    static func writev(_ fd: Int32, _ vectors: UnsafePointer<iovec>, _ count: Int32) throws(SocketError) -> IOResult {
        var message = msghdr()
        message.msg_iov = UnsafeMutablePointer(mutating: vectors)
        message.msg_iovlen = Int(count)
        let n = retryingOnInterrupt { sendmsg(fd, &message, Int32(MSG_NOSIGNAL)) }
        if n >= 0 { return .processed(n) }
        if errno == EAGAIN || errno == EWOULDBLOCK { return .wouldBlock }
        throw SocketError(operation: "writev", errno: errno)
    }

    /// The socket's pending error (SO_ERROR), cleared by reading it; 0 if none.
    static func pendingError(_ fd: Int32) -> Int32 {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 ? error : errno
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
            let fd = try check("socket") { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
            unlink(path)   // a stale socket file from an earlier run would make bind fail
            var addr = sockaddr_un()
            addr.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else {
                close(fd)
                throw SocketError(operation: "unix socket path too long", errno: ENAMETOOLONG)
            }
            withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: bytes + [0]) }
            return try bindAndListen(fd, addr, backlog)
        case .inet(let host, let port):
            let literal = host == "localhost" ? "127.0.0.1" : host
            var a4 = sockaddr_in(), a6 = sockaddr_in6()
            if inet_pton(AF_INET, literal, &a4.sin_addr) == 1 {
                a4.sin_family = sa_family_t(AF_INET)
                a4.sin_port = port.bigEndian
                let fd = try inetSocket(AF_INET)
                return try bindAndListen(fd, a4, backlog)
            }
            guard inet_pton(AF_INET6, literal, &a6.sin6_addr) == 1 else {
                throw SocketError(operation: "listen address '\(host)' is not an IP literal", errno: EINVAL)
            }
            a6.sin6_family = sa_family_t(AF_INET6)
            a6.sin6_port = port.bigEndian
            let fd = try inetSocket(AF_INET6)
            return try bindAndListen(fd, a6, backlog)
        }
    }

    private static func inetSocket(_ family: Int32) throws(SocketError) -> Int32 {
        let fd = try check("socket") { socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    /// Binds `fd` to a `sockaddr_in`, `sockaddr_in6` or `sockaddr_un` and listens;
    /// closes it if either fails.
    private static func bindAndListen<Address>(_ fd: Int32, _ address: Address, _ backlog: Int32) throws(SocketError) -> Int32 {
        var address = address
        do {
            _ = try check("bind") {
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<Address>.size)) }
                }
            }
            _ = try check("listen") { Glibc.listen(fd, backlog) }
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
