import Foundation
import Glibc

/// A blocking loopback client for tests: raw bytes out, parsed responses in.
public final class TestClient {
    public let fd: Int32

    public struct Response {
        public var status: Int
        public var headers: [String: String]
        public var body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// `receiveBuffer`: SO_RCVBUF, set before connecting so the window the
    /// server sees is small from the start (a client slow to read).
    public init(port: UInt16, host: String = "127.0.0.1", receiveBuffer: Int32? = nil) throws {
        fd = try Self.connected(socket(host.contains(":") ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)) { fd in
            if var size = receiveBuffer {
                setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            }
            guard host.contains(":") else { return Loopback.connect(fd, host: host, port: port) }
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_port = port.bigEndian
            inet_pton(AF_INET6, host, &a.sin6_addr)
            return withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        }
    }

    public init(unixPath: String) throws {
        fd = try Self.connected(socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)) { fd in
            var a = sockaddr_un()
            a.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &a.sun_path) { $0.copyBytes(from: Array(unixPath.utf8) + [0]) }
            return withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        }
    }

    /// Connects `fd` (5 s receive timeout) or closes it and throws, before
    /// any object exists: a class whose init throws once it is whole still
    /// runs its deinit, so closing in the init as well closed the number
    /// twice, and the second close hit whatever socket had been given it
    /// meanwhile (a churn client's or the daemon's, reset mid-request).
    private static func connected(_ fd: Int32, _ connect: (Int32) -> Int32) throws -> Int32 {
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE) }
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        guard connect(fd) == 0 else {
            let e = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: e) ?? .ECONNREFUSED)
        }
        return fd
    }

    /// Reads responses from a socket the test connected itself; the test
    /// keeps closing it.
    public init(adopting fd: Int32) {
        self.fd = fd
        ownsDescriptor = false
    }

    private var ownsDescriptor = true

    deinit { if ownsDescriptor { close(fd) } }

    public func send(_ text: String) { send(Array(text.utf8)) }

    public func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    private var buffer: [UInt8] = []

    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return false }
        buffer += chunk[0..<n]
        return true
    }

    /// Reads one response; nil when the connection closed (or timed out) first.
    public func readResponse(head: Bool = false) -> Response? {
        var end: Int?
        while end == nil {
            if let r = buffer.firstRange(of: Array("\r\n\r\n".utf8)) { end = r.upperBound; break }
            guard fill() else { return nil }
        }
        let headText = String(decoding: buffer[0..<end!], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let status = Int(lines.removeFirst().split(separator: " ")[1])!
        var headers: [String: String] = [:]
        for line in lines where line.contains(":") {
            let i = line.firstIndex(of: ":")!
            headers[line[..<i].lowercased()] = line[line.index(after: i)...].trimmingCharacters(in: .whitespaces)
        }
        let length = head ? 0 : Int(headers["content-length"] ?? "0")!
        while buffer.count < end! + length { guard fill() else { return nil } }
        let body = Array(buffer[end!..<(end! + length)])
        buffer.removeFirst(end! + length)
        return Response(status: status, headers: headers, body: body)
    }

    /// Reads one chunk of a chunked body (after `readResponse(head: true)`):
    /// its bytes, empty for the last chunk (whose trailer section is read
    /// too); nil when the connection closed (or timed out) first, or the
    /// framing is wrong.
    public func readChunk() -> [UInt8]? {
        var lineEnd: Int?
        while lineEnd == nil {
            if let r = buffer.firstRange(of: Array("\r\n".utf8)) { lineEnd = r.lowerBound; break }
            guard fill() else { return nil }
        }
        let sizeText = String(decoding: buffer[0..<lineEnd!], as: UTF8.self)
        guard let size = Int(sizeText, radix: 16) else { return nil }
        let start = lineEnd! + 2
        let needed = size == 0 ? start + 2 : start + size + 2
        while buffer.count < needed { guard fill() else { return nil } }
        guard buffer[needed - 2] == UInt8(ascii: "\r"), buffer[needed - 1] == UInt8(ascii: "\n") else { return nil }
        let chunk = Array(buffer[start..<(start + size)])
        buffer.removeFirst(needed)
        return chunk
    }

    /// Everything until the server closes the connection (a body delimited
    /// by the close), after what `readResponse` left buffered.
    public func readToEnd() -> [UInt8] {
        while fill() {}
        defer { buffer = [] }
        return buffer
    }

    /// True when the server closed the connection (EOF within the timeout).
    public func isClosedByPeer() -> Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) == 0
    }
}
