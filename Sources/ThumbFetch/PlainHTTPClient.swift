import Foundation
import Glibc

/// An origin's answer before redirects are followed.
struct OriginResponse {
    var status: Int
    var headers: [String: String]   // lower-cased names
    var body: [UInt8]
}

/// A small blocking HTTP/1.1 client for plain `http`: it connects to the very
/// address the SSRF check approved (no second DNS lookup can rebind it), and
/// enforces the connect timeout, the total deadline and the byte limit itself.
struct PlainHTTPClient {
    let policy: FetchPolicy

    func get(_ url: SourceURL, address: ResolvedAddress, conditional: Conditional?,
             deadline: Double) throws(FetchError) -> OriginResponse {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .origin("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        try connect(fd, address, deadline: min(deadline, now() + policy.connectTimeout), overall: deadline)
        var request = "GET \(url.target) HTTP/1.1\r\nHost: \(url.hostHeader)\r\nUser-Agent: thumbd/0.1\r\n"
        request += "Accept: image/*\r\nAccept-Encoding: identity\r\nConnection: close\r\n"
        if let etag = conditional?.etag { request += "If-None-Match: \(etag)\r\n" }
        if let lm = conditional?.lastModified { request += "If-Modified-Since: \(lm)\r\n" }
        request += "\r\n"
        try sendAll(fd, Array(request.utf8), deadline: deadline)
        var reader = Reader(fd: fd, deadline: deadline)
        let head = try reader.readHead()
        var response = try Self.parseHead(head)
        if response.status == 304 || response.status == 204 || (100..<200).contains(response.status) { return response }
        if (300..<400).contains(response.status), response.headers["location"] != nil { return response }
        guard (200..<300).contains(response.status) else { return response }
        if response.headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            response.body = try reader.readChunked(limit: policy.maxBytes)
        } else if let text = response.headers["content-length"] {
            // 1*DIGIT only (RFC 9110 §8.6): Int() alone would also take "+5".
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let length = Int(text) else {
                throw .origin("origin sent an invalid Content-Length")
            }
            if length > policy.maxBytes { throw .tooLarge(limit: policy.maxBytes) }
            response.body = try reader.read(exactly: length)
        } else {
            response.body = try reader.readToEnd(limit: policy.maxBytes)
        }
        return response
    }

    private func now() -> Double { Date().timeIntervalSince1970 }

    private func connect(_ fd: Int32, _ address: ResolvedAddress, deadline: Double, overall: Double) throws(FetchError) {
        let result = address.storage.withUnsafeBytes {
            Glibc.connect(fd, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count))
        }
        if result == 0 { return }
        guard errno == EINPROGRESS else { throw .origin("cannot connect to the origin: \(String(cString: strerror(errno)))") }
        guard Reader.wait(fd, events: Int16(POLLOUT), until: deadline) else {
            throw .timeout(deadline < overall ? "connect to the origin timed out" : "origin took too long")
        }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        guard error == 0 else { throw .origin("cannot connect to the origin: \(String(cString: strerror(error)))") }
    }

    private func sendAll(_ fd: Int32, _ bytes: [UInt8], deadline: Double) throws(FetchError) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n > 0 { sent += n; continue }
            if n < 0 && (errno == EAGAIN || errno == EINTR) {
                guard Reader.wait(fd, events: Int16(POLLOUT), until: deadline) else { throw .timeout("origin took too long") }
                continue
            }
            throw .origin("origin closed the connection")
        }
    }

    static func parseHead(_ head: [UInt8]) throws(FetchError) -> OriginResponse {
        let text = String(decoding: head, as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        let status = lines.removeFirst().split(separator: " ")
        guard status.count >= 2, status[0].hasPrefix("HTTP/1."), let code = Int(status[1]), (100...999).contains(code) else {
            throw .origin("origin sent a malformed response")
        }
        var headers: [String: String] = [:]
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw .origin("origin sent a malformed header") }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            // Differing Content-Length fields make the framing invalid (RFC 9112 §6.3): never pick one.
            if name == "content-length", let earlier = headers[name], earlier != value {
                throw .origin("origin sent conflicting Content-Length fields")
            }
            headers[name] = value
        }
        return OriginResponse(status: code, headers: headers, body: [])
    }
}
