/// How a response goes on the wire: the status line and the header fields the
/// server adds (Date, Server, Content-Length, Connection), then the body.
enum ResponseHead {
    static func bytes(of response: HTTPResponse, keepAlive: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(response.status) \(HTTPResponse.reason(response.status))\r\nDate: \(HTTPDate.now())\r\nServer: thumbd\r\n"
        // A 304 describes a representation it does not carry: no Content-Length.
        if response.status != 304 { head += "Content-Length: \(response.body.count)\r\n" }
        head += keepAlive ? "Connection: keep-alive\r\n" : "Connection: close\r\n"
        for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        return Array(head.utf8)
    }

    /// The bytes after the head: none for HEAD (`omitBody`) and 304.
    static func body(of response: HTTPResponse) -> [UInt8] {
        response.omitBody || response.status == 304 ? [] : response.body
    }
}
