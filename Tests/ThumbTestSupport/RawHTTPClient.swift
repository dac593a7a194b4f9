import Foundation
import Glibc

/// One HTTP/1.1 exchange over a fresh loopback socket, `Connection: close`,
/// read to the end. The tests' client: URLSession on Linux crashed now and then
/// in `invalidateAndCancel` (SIGILL in FoundationNetworking, 1 full run in ~10),
/// and it adds fields of its own to every request.
public enum RawHTTPClient {
    public typealias Answer = (status: Int, headers: [String: String], body: [UInt8])

    /// `headers` names are lower-cased in the answer; repeated fields joined with ", ".
    /// Status 0 when the exchange failed or took longer than `timeout`.
    public static func exchange(port: UInt16, method: String, target: String, headers: [String: String],
                         body: [UInt8]?, timeout: Int = 10) -> Answer {
        let fd = Loopback.connect(port: port, receiveTimeout: timeout)
        guard fd >= 0 else { return (0, [:], []) }
        defer { close(fd) }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        let request = Array((head + "\r\n").utf8) + (body ?? [])
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return (0, [:], []) }
            sent += n
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            received += buffer[0..<n]
        }
        return parse(received, method: method)
    }

    private static func parse(_ bytes: [UInt8], method: String) -> Answer {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0...max(0, bytes.count - 4)).first(where: { bytes.count >= 4 && Array(bytes[$0..<$0 + 4]) == separator }) else {
            return (0, [:], [])
        }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = lines[0].split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return (0, [:], []) }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        var body = Array(bytes[(end + 4)...])
        if method == "HEAD" || status == 304 { body = [] }
        if let length = headers["content-length"].flatMap(Int.init), body.count > length { body = Array(body.prefix(length)) }
        return (status, headers, body)
    }
}
