/// How a response goes on the wire: the status line and the header fields the
/// server adds (Date, Server, Content-Length, Connection), then the body.
enum ResponseHead {
    /// The head in a new array.
    static func bytes(of response: HTTPResponse, keepAlive: Bool, date: HTTPDate = .system) -> [UInt8] {
        var out: [UInt8] = []
        write(response, keepAlive: keepAlive, date: date, into: &out)
        return out
    }

    /// Appends the head to `out`, which a connection reuses between responses:
    /// building it as a String by interpolation and converting cost about six
    /// allocations per response, a new array one.
    static func write(_ response: HTTPResponse, keepAlive: Bool, date: HTTPDate, framing: BodyFraming = .length,
                      into out: inout [UInt8]) {
        out.reserveCapacity(out.count + 160 + response.headers.count * 48 + response.preparedFields.count)
        out.append(contentsOf: "HTTP/1.1 ".utf8)
        appendDecimal(response.status, to: &out)
        out.append(UInt8(ascii: " "))
        out.append(contentsOf: HTTPResponse.reason(response.status).utf8)
        out.append(contentsOf: "\r\nDate: ".utf8)
        out.append(contentsOf: date.now().utf8)
        out.append(contentsOf: "\r\nServer: thumbd\r\n".utf8)
        // A 304 describes a representation it does not carry: no Content-Length.
        if framing == .chunked {
            out.append(contentsOf: "Transfer-Encoding: chunked\r\n".utf8)
        } else if response.status != 304 && framing == .length {
            out.append(contentsOf: "Content-Length: ".utf8)
            appendDecimal(response.body.count, to: &out)
            out.append(contentsOf: "\r\n".utf8)
        }
        out.append(contentsOf: keepAlive ? "Connection: keep-alive\r\n".utf8 : "Connection: close\r\n".utf8)
        for (name, value) in response.headers {
            out.append(contentsOf: name.utf8)
            out.append(contentsOf: ": ".utf8)
            out.append(contentsOf: value.utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
        out.append(contentsOf: response.preparedFields)
        out.append(contentsOf: "\r\n".utf8)
    }

    /// The interim answer to `Expect: 100-continue`: a status line alone
    /// (a 1xx carries no Content-Length, RFC 9110 §8.6).
    static let continueBytes = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// The bytes after the head: none for HEAD (`omitBody`) and 304.
    static func body(of response: HTTPResponse) -> [UInt8] {
        response.omitBody || response.status == 304 ? [] : response.body
    }

    /// One part of a streamed body as it goes on the wire: a chunk (its size
    /// in hex, the bytes, CRLF), or the bytes bare (`.close`); with `last`,
    /// the chunked body's end (`0` CRLF CRLF) after it.
    static func part(_ bytes: [UInt8], framing: BodyFraming, last: Bool, into out: inout [UInt8]) {
        guard framing == .chunked else { return out.append(contentsOf: bytes) }
        if !bytes.isEmpty {
            out.append(contentsOf: String(bytes.count, radix: 16).utf8)
            out.append(contentsOf: "\r\n".utf8)
            out.append(contentsOf: bytes)
            out.append(contentsOf: "\r\n".utf8)
        }
        if last { out.append(contentsOf: "0\r\n\r\n".utf8) }
    }

    private static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        guard value >= 0 else {
            out.append(contentsOf: String(value).utf8)
            return
        }
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}
