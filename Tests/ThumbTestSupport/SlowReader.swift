import Foundation
import Glibc

/// A loopback client with a 4 KiB receive buffer that sends one request and
/// then reads nothing until told to: the slow reader of HTTPServer.md.
public final class SlowReader {
    public let fd: Int32
    /// The first bytes `readToEnd` received (at most 2 KiB): a refusal's
    /// head and body fit, a 16 MiB answer's head does too.
    public private(set) var start: [UInt8] = []

    public init(port: UInt16, request: String) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var small: Int32 = 4096
        // Before connect, so the window the server sees is small from the start.
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        // No close here: the object is whole, so a throw still runs deinit,
        // which closes it (closing here too closed a reused number twice).
        if Loopback.connect(fd, port: port) != 0 { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ECONNREFUSED) }
        let bytes = Array(request.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    deinit { close(fd) }

    /// Reads until end of file, a reset or `seconds` pass; the bytes received
    /// (head included) and whether the server ended the connection.
    public func readToEnd(seconds: Double = 5) -> (bytes: Int, ended: Bool) {
        let deadline = Date().addingTimeInterval(seconds)
        var total = 0
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while Date() < deadline {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 100) > 0 else { continue }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 {
                if start.count < 2048 { start += chunk[0..<min(n, 2048 - start.count)] }
                total += n
                continue
            }
            if n == 0 || (errno != EAGAIN && errno != EINTR) { return (total, true) }
        }
        return (total, false)
    }
}
