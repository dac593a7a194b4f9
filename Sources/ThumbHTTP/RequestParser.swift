/// An incremental HTTP/1.x request parser: bytes in as they arrive (one at a
/// time works), complete requests or a precise error out. Pure: no I/O.
public struct RequestParser {
    public enum Event: Sendable {
        case request(HTTPRequest)
        case error(HTTPError)
    }

    public static let maxTargetBytes = 8192
    public static let maxBodyBytes = 1 << 20

    private let maxHeaderBytes: Int
    private var buffer: [UInt8] = []
    private var scanned = 0
    private var pendingHead: HTTPRequest?
    private var bodyLength = 0
    private(set) var failed = false

    public init(maxHeaderBytes: Int = 16_384) {
        self.maxHeaderBytes = maxHeaderBytes
    }

    /// Bytes received but not yet part of a returned request.
    public var bufferedBytes: Int { buffer.count }

    /// True once any byte of the next request has arrived.
    public var hasPartialRequest: Bool { !buffer.isEmpty || pendingHead != nil }

    public mutating func append<C: Collection<UInt8>>(_ bytes: C) {
        buffer.append(contentsOf: bytes)
    }

    /// The next complete request or error, or nil when more bytes are needed.
    /// After an error the parser stays failed (the connection must close).
    public mutating func next() -> Event? {
        guard !failed else { return nil }
        if pendingHead == nil {
            // Tolerate empty lines between pipelined requests (RFC 9112 §2.2).
            while buffer.first == 0x0D || buffer.first == 0x0A, scanned == 0 {
                buffer.removeFirst()
            }
            guard let end = headEnd() else {
                if let error = oversizedWithoutEnd() { return fail(error) }
                return nil
            }
            switch parseHead(buffer[0..<end.start]) {
            case .failure(let error): return fail(error)
            case .success(let (request, length)):
                buffer.removeFirst(end.next)
                scanned = 0
                pendingHead = request
                bodyLength = length
            }
        }
        guard buffer.count >= bodyLength, var request = pendingHead else { return nil }
        request.body = Array(buffer[0..<bodyLength])
        buffer.removeFirst(bodyLength)
        pendingHead = nil
        bodyLength = 0
        return .request(request)
    }

    private mutating func fail(_ error: HTTPError) -> Event {
        failed = true
        buffer = []
        return .error(error)
    }

    /// Where the head ends (CRLFCRLF, or LFLF as lenient servers accept).
    private mutating func headEnd() -> (start: Int, next: Int)? {
        var i = max(0, scanned - 3)
        while i < buffer.count {
            if buffer[i] == 0x0A {
                if i + 1 < buffer.count, buffer[i + 1] == 0x0A { return (i, i + 2) }
                if i + 2 < buffer.count, buffer[i + 1] == 0x0D, buffer[i + 2] == 0x0A { return (i, i + 3) }
            }
            i += 1
        }
        scanned = buffer.count
        return nil
    }

    private func oversizedWithoutEnd() -> HTTPError? {
        let lineEnd = buffer.firstIndex(of: 0x0A)
        if lineEnd == nil, buffer.count > Self.maxTargetBytes + 64 { return .uriTooLong }
        if buffer.count > maxHeaderBytes { return lineEnd == nil ? .uriTooLong : .headersTooLarge }
        return nil
    }

    private func parseHead(_ head: ArraySlice<UInt8>) -> Result<(HTTPRequest, Int), HTTPError> {
        var lines = head.split(separator: 0x0A, omittingEmptySubsequences: false).map { line -> ArraySlice<UInt8> in
            line.last == 0x0D ? line.dropLast() : line
        }
        let requestLine = lines.removeFirst()
        let parts = requestLine.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return .failure(.badRequest("malformed request line")) }
        let target = parts[1]
        if target.count > Self.maxTargetBytes { return .failure(.uriTooLong) }
        if head.count > maxHeaderBytes { return .failure(.headersTooLarge) }
        guard !parts[0].isEmpty, parts[0].allSatisfy(Self.isTokenByte) else {
            return .failure(.badRequest("malformed method"))
        }
        let version = Array(parts[2])
        guard version == Array("HTTP/1.1".utf8) || version == Array("HTTP/1.0".utf8) else {
            return .failure(.badRequest("unsupported HTTP version"))
        }
        guard target.first == UInt8(ascii: "/"), target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(.badRequest("malformed request target"))
        }
        let question = target.firstIndex(of: UInt8(ascii: "?"))
        let rawPath = question.map { target[target.startIndex..<$0] } ?? target
        guard let path = PercentDecoding.decode(rawPath, plusAsSpace: false),
              let query = PercentDecoding.query(question.map { target[($0 + 1)...] } ?? []) else {
            return .failure(.badRequest("invalid percent-encoding in the request target"))
        }
        var headers: [(name: String, value: String)] = []
        var contentLength: Int?
        for line in lines {
            guard let first = line.first else { continue }
            if first == 0x20 || first == 0x09 { return .failure(.badRequest("obsolete header line folding")) }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
                  line[line.startIndex..<colon].allSatisfy(Self.isTokenByte) else {
                return .failure(.badRequest("malformed header line"))
            }
            let name = String(decoding: line[line.startIndex..<colon], as: UTF8.self)
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingSpaces()
            let lower = name.lowercased()
            if lower == "transfer-encoding" { return .failure(.lengthRequired) }
            if lower == "content-length" {
                guard !value.isEmpty, value.utf8.count <= 18, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                      let n = Int(value), contentLength == nil || contentLength == n else {
                    return .failure(.badRequest("invalid Content-Length"))
                }
                contentLength = n
            }
            headers.append((name, value))
        }
        let length = contentLength ?? 0
        if length > Self.maxBodyBytes { return .failure(.payloadTooLarge) }
        let request = HTTPRequest(method: String(decoding: parts[0], as: UTF8.self),
                                  target: String(decoding: target, as: UTF8.self), path: path, query: query,
                                  minorVersion: version.last == UInt8(ascii: "1") ? 1 : 0, headers: headers)
        return .success((request, length))
    }

    private static func isTokenByte(_ c: UInt8) -> Bool {
        switch c {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"): true
        default: false
        }
    }
}

extension String {
    func trimmingSpaces() -> String {
        Substring(self).trimmingCharacters(in: " \t")
    }
}
