import Foundation
import Glibc

/// Buffered reads from a non-blocking socket, every wait bounded by one
/// deadline for the whole download: a drip-feeding origin is cut off.
struct Reader {
    let fd: Int32
    let deadline: Double
    private var buffer: [UInt8] = []

    init(fd: Int32, deadline: Double) {
        self.fd = fd
        self.deadline = deadline
    }

    /// poll() until `events` or the deadline; false on timeout.
    static func wait(_ fd: Int32, events: Int16, until deadline: Double) -> Bool {
        while true {
            let left = deadline - Date().timeIntervalSince1970
            guard left > 0 else { return false }
            var p = pollfd(fd: fd, events: events, revents: 0)
            let r = poll(&p, 1, Int32(min(left * 1000, 60_000)) + 1)
            if r > 0 { return true }
            if r < 0 && errno != EINTR { return true }   // let the next read report the error
        }
    }

    /// More bytes into the buffer; false at end of stream.
    private mutating func fill() throws(FetchError) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { buffer += chunk[0..<n]; return true }
            if n == 0 { return false }
            if errno == EAGAIN || errno == EINTR {
                guard Self.wait(fd, events: Int16(POLLIN), until: deadline) else {
                    throw .timeout("origin took longer than origin.timeoutSeconds")
                }
                continue
            }
            throw .origin("connection to the origin failed: \(String(cString: strerror(errno)))")
        }
    }

    mutating func readHead() throws(FetchError) -> [UInt8] {
        let marker: [UInt8] = [13, 10, 13, 10]
        while true {
            if let r = buffer.firstRange(of: marker) {
                let head = Array(buffer[0..<r.lowerBound])
                buffer.removeFirst(r.upperBound)
                return head
            }
            guard buffer.count < 65536 else { throw .origin("origin response head too large") }
            guard try fill() else { throw .origin("origin closed the connection before answering") }
        }
    }

    mutating func read(exactly count: Int) throws(FetchError) -> [UInt8] {
        while buffer.count < count {
            guard try fill() else { throw .origin("origin sent fewer bytes than its Content-Length") }
        }
        let out = Array(buffer[0..<count])
        buffer.removeFirst(count)
        return out
    }

    mutating func readToEnd(limit: Int) throws(FetchError) -> [UInt8] {
        while try fill() {
            if buffer.count > limit { throw .tooLarge(limit: limit) }
        }
        if buffer.count > limit { throw .tooLarge(limit: limit) }
        defer { buffer = [] }
        return buffer
    }

    private mutating func readLine() throws(FetchError) -> String {
        while true {
            if let i = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[0..<i], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                buffer.removeFirst(i + 1)
                return line
            }
            guard buffer.count < 4096 else { throw .origin("malformed chunked body") }
            guard try fill() else { throw .origin("origin closed the connection inside a chunked body") }
        }
    }

    mutating func readChunked(limit: Int) throws(FetchError) -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let sizeText = (try readLine().split(separator: ";").first.map(String.init) ?? "")
                .trimmingCharacters(in: .whitespaces)
            // Hex digits only: Int(_:radix:) would also take a sign.
            guard !sizeText.isEmpty, sizeText.utf8.allSatisfy({ $0 < 128 && Character(Unicode.Scalar($0)).isHexDigit }),
                  let size = Int(sizeText, radix: 16) else { throw .origin("malformed chunked body") }
            if size == 0 { return body }
            // Compared without adding: a hostile chunk size near Int.max must not overflow (a trap).
            if size > limit - body.count { throw .tooLarge(limit: limit) }
            body += try read(exactly: size)
            guard try readLine().isEmpty else { throw .origin("malformed chunked body") }
        }
    }
}
