/// An incremental HTTP/1.x request parser: bytes in as they arrive (one at a
/// time works), complete requests or a precise error out. Pure: no I/O.
public struct RequestParser {
    public enum Event: Sendable {
        case request(HTTPRequest)
        case error(HTTPError)
        /// An HTTP/1.1 head with `Expect: 100-continue` whose body has not
        /// all arrived: the client may wait for `100 Continue` (or a final
        /// refusal) before sending it. Its `.request` follows once the body is here.
        case continueExpected(HTTPRequest)
    }

    public static let maxTargetBytes = 8192
    public static let maxBodyBytes = 1 << 20

    private let maxHeaderBytes: Int
    private var buffer: [UInt8] = []
    private var scanned = 0
    private var pendingHead: HTTPRequest?
    private var bodyLength = 0
    /// The pending head expects `100 Continue` and `continueExpected` has not been returned yet.
    private var continuePending = false
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
            // Tolerate empty lines (CRLF or LF) between pipelined requests
            // (RFC 9112 §2.2); a bare CR is left for the head check to refuse.
            while scanned == 0, let first = buffer.first {
                if first == 0x0A {
                    buffer.removeFirst()
                } else if first == 0x0D, buffer.count >= 2, buffer[1] == 0x0A {
                    buffer.removeFirst(2)
                } else if first == 0x0D, buffer.count == 1 {
                    return nil   // CR alone: its LF may be next
                } else {
                    break
                }
            }
            guard let end = headEnd() else {
                if let error = oversizedWithoutEnd() { return fail(error) }
                return nil
            }
            switch parseHead(buffer[0..<end.start]) {
            case .failure(let error): return fail(error)
            case .success(let (request, length, expectsContinue)):
                buffer.removeFirst(end.next)
                scanned = 0
                pendingHead = request
                bodyLength = length
                continuePending = expectsContinue && length > 0
            }
        }
        guard buffer.count >= bodyLength, var request = pendingHead else {
            // RFC 9110 §10.1.1: no 100 is owed once the body is here, so only a waiting head asks.
            if continuePending, let head = pendingHead {
                continuePending = false
                return .continueExpected(head)
            }
            return nil
        }
        continuePending = false
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
        let found: (start: Int, next: Int)? = buffer.withUnsafeBufferPointer { p in
            var i = max(0, scanned - 3)
            while i < p.count {
                if p[i] == 0x0A {
                    if i + 1 < p.count, p[i + 1] == 0x0A { return (i, i + 2) }
                    if i + 2 < p.count, p[i + 1] == 0x0D, p[i + 2] == 0x0A { return (i, i + 3) }
                }
                i += 1
            }
            return nil
        }
        if found == nil { scanned = buffer.count }
        return found
    }

    /// A head still without its end that is certainly too large. Its end
    /// (LF LF, or LF CR LF) may start two bytes before the buffer's end, so
    /// only a buffer longer than the limit by more than that is over it.
    private func oversizedWithoutEnd() -> HTTPError? {
        sizeError(firstLineEnd: buffer.firstIndex(of: 0x0A), headLength: buffer.count - 2)
    }

    /// The one size rule for a head however it arrived: the request line
    /// longer than a target can be (414), the head longer than
    /// `maxHeaderBytes` (431, or 414 when its first line alone is). Checked
    /// before anything else in the head, so that a head fed whole and one fed
    /// in pieces (which meets the limit before its end arrives) get the same
    /// answer (the HTTP fuzzer found 400 against 431). `firstLineEnd`: the
    /// first LF, nil if none yet.
    private func sizeError(firstLineEnd: Int?, headLength: Int) -> HTTPError? {
        let lineEnd = firstLineEnd ?? Int.max
        if lineEnd > Self.maxTargetBytes + 64, headLength + 2 > Self.maxTargetBytes + 64 { return .uriTooLong }
        if headLength > maxHeaderBytes { return lineEnd > maxHeaderBytes + 2 ? .uriTooLong : .headersTooLarge }
        return nil
    }

    /// Checks a head and returns its request, which keeps a copy of the
    /// head's bytes: fields and query are only validated here, decoded when
    /// the handler asks (`ReceivedHead`). Nothing else is allocated for the
    /// common request but the target and path Strings.
    private func parseHead(_ slice: ArraySlice<UInt8>) -> Result<(HTTPRequest, Int, Bool), HTTPError> {
        // RFC 9112 §2.2: a CR not followed by LF, or a NUL, anywhere in the head
        // is refused, not read around (a proxy in front may split lines there).
        if let tooLarge = sizeError(firstLineEnd: slice.firstIndex(of: 0x0A) ?? slice.endIndex,
                                   headLength: slice.count) {
            return .failure(tooLarge)
        }
        if let refusal = Self.strayControl(in: slice) { return .failure(refusal) }
        let head = Array(slice)
        let lineEnd = head.firstIndex(of: 0x0A) ?? head.endIndex
        let fieldsStart = min(lineEnd + 1, head.endIndex)
        let requestLine = head[0..<lineEnd].last == 0x0D ? head[0..<(lineEnd - 1)] : head[0..<lineEnd]
        // Exactly two spaces: method, target, version.
        guard let sp1 = requestLine.firstIndex(of: 0x20),
              let sp2 = requestLine[(sp1 + 1)...].firstIndex(of: 0x20),
              !requestLine[(sp2 + 1)...].contains(0x20) else {
            return .failure(.badRequest("malformed request line"))
        }
        let method = requestLine[requestLine.startIndex..<sp1]
        let rawTarget = requestLine[(sp1 + 1)..<sp2]
        let version = requestLine[(sp2 + 1)...]
        if rawTarget.count > Self.maxTargetBytes { return .failure(.uriTooLong) }
        if head.count > maxHeaderBytes { return .failure(.headersTooLarge) }
        guard !method.isEmpty, method.allSatisfy(Self.isTokenByte) else {
            return .failure(.badRequest("malformed method"))
        }
        guard version.elementsEqual("HTTP/1.1".utf8) || version.elementsEqual("HTTP/1.0".utf8) else {
            return .failure(.badRequest("unsupported HTTP version"))
        }
        let minorVersion = version.last == UInt8(ascii: "1") ? 1 : 0
        guard let target = RequestTarget.originForm(rawTarget) else {
            return .failure(.badRequest("malformed request target"))
        }
        let question = target.firstIndex(of: UInt8(ascii: "?"))
        let rawPath = question.map { target[target.startIndex..<$0] } ?? target
        // The query ends where the target does, in the origin form and in the head alike.
        let queryCount = question.map { target.endIndex - ($0 + 1) } ?? 0
        let query = (sp2 - queryCount)..<sp2
        guard let path = PercentDecoding.decode(rawPath, plusAsSpace: false),
              PercentDecoding.isValidQuery(head[query]) else {
            return .failure(.badRequest("invalid percent-encoding in the request target"))
        }
        var fields = FieldCheck(minorVersion: minorVersion)
        var refusal: HTTPError?
        head.withUnsafeBufferPointer { p in
            ReceivedHead.forEachLine(p, from: fieldsStart) { line in
                refusal = fields.check(p[line])
                return refusal == nil
            }
        }
        if let refusal { return .failure(refusal) }
        if minorVersion == 1 && fields.hosts == 0 { return .failure(.badRequest("HTTP/1.1 request without Host")) }
        let length = fields.contentLength ?? 0
        if length > Self.maxBodyBytes { return .failure(.payloadTooLarge) }
        let request = HTTPRequest(method: Self.methodString(method), target: String(decoding: target, as: UTF8.self),
                                  path: path, minorVersion: minorVersion,
                                  head: ReceivedHead(bytes: head, fieldsStart: fieldsStart, query: query))
        return .success((request, length, fields.expectsContinue))
    }

    /// The two methods nearly every request uses, without decoding.
    private static func methodString(_ bytes: ArraySlice<UInt8>) -> String {
        if bytes.elementsEqual("GET".utf8) { return "GET" }
        if bytes.elementsEqual("HEAD".utf8) { return "HEAD" }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// What the parser learns from the header lines while checking them.
    private struct FieldCheck {
        let minorVersion: Int
        var contentLength: Int?
        var hosts = 0
        var expectsContinue = false

        init(minorVersion: Int) {
            self.minorVersion = minorVersion
        }

        /// Checks one header line; the refusal, if it is one.
        mutating func check(_ line: Slice<UnsafeBufferPointer<UInt8>>) -> HTTPError? {
            let first = line[line.startIndex]
            if first == 0x20 || first == 0x09 { return .badRequest("obsolete header line folding") }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
                  line[line.startIndex..<colon].allSatisfy(RequestParser.isTokenByte) else {
                return .badRequest("malformed header line")
            }
            let name = line[line.startIndex..<colon]
            let value = ReceivedHead.trimmed(line[(colon + 1)...])
            if HeaderName.equal(name, lowercase: "transfer-encoding") {
                return .lengthRequired
            } else if HeaderName.equal(name, lowercase: "content-length") {
                guard !value.isEmpty, value.count <= 18, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                    return .badRequest("invalid Content-Length")
                }
                let n = value.reduce(0) { $0 * 10 + Int($1 - 0x30) }
                guard contentLength == nil || contentLength == n else { return .badRequest("invalid Content-Length") }
                contentLength = n
            } else if HeaderName.equal(name, lowercase: "host") {
                // RFC 9112 §3.2: two Host fields, or one that is not a host[:port], is 400.
                hosts += 1
                guard hosts == 1 else { return .badRequest("more than one Host header") }
                guard RequestTarget.isAuthority(value, allowEmpty: true) else { return .badRequest("invalid Host header") }
            } else if HeaderName.equal(name, lowercase: "expect") {
                // RFC 9110 §10.1.1: 100-continue is the only expectation; an
                // HTTP/1.0 client's 100-continue is ignored.
                let onlyContinue = value.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).allSatisfy {
                    HeaderName.equal(ReceivedHead.trimmed($0), lowercase: "100-continue")
                }
                guard onlyContinue else { return .expectationFailed }
                expectsContinue = minorVersion == 1
            }
            return nil
        }
    }

    /// A bare CR or a NUL in the head, as a 400; the head's last CR is the
    /// one before the LF that ends it.
    private static func strayControl(in head: ArraySlice<UInt8>) -> HTTPError? {
        head.withUnsafeBufferPointer { p in
            var i = 0
            while i < p.count {
                switch p[i] {
                case 0x00:
                    return .badRequest("NUL in the request head")
                case 0x0D where i + 1 < p.count && p[i + 1] != 0x0A:
                    return .badRequest("bare CR in the request head")
                default:
                    break
                }
                i += 1
            }
            return nil
        }
    }

    static func isTokenByte(_ c: UInt8) -> Bool {
        switch c {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"): true
        default: false
        }
    }
}

