/// A response to serialize and write, with what the access log records.
struct OutgoingResponse {
    // (Kept small: it rides in every `Actions.next` that writes, and an
    // `Actions` over 128 bytes is copied with a memcpy call. The handler's
    // time stays in the machine until the response is recorded.)
    /// For HEAD, `omitBody` is set.
    var response: HTTPResponse
    /// `Connection: keep-alive` rather than `close`.
    var keepAlive: Bool
    /// `100 Continue`: a bare status line, not a response (not logged, counted or charged).
    var isInterim = false
    /// How the body is delimited: by `Content-Length`, or (a streamed
    /// response) by chunks, or by the connection's close for HTTP/1.0.
    var framing = BodyFraming.length
    /// `-` for the server's own errors.
    var method: String
    var path: String

    init(response: HTTPResponse, keepAlive: Bool, method: String, path: String) {
        self.response = response
        self.keepAlive = keepAlive
        self.method = method
        self.path = path
    }

    /// The interim answer to `Expect: 100-continue`.
    static var `continue`: OutgoingResponse {
        var interim = OutgoingResponse(response: HTTPResponse(status: 100), keepAlive: true, method: "-", path: "-")
        interim.isInterim = true
        return interim
    }

    /// The server's own error answer, rendered; the connection closes after it.
    init(error: HTTPResponse) {
        self.init(response: error, keepAlive: false, method: "-", path: "-")
    }
}

/// How a response's body is delimited on the wire.
enum BodyFraming: UInt8 {
    /// `Content-Length`: the body is known whole.
    case length
    /// `Transfer-Encoding: chunked`: a streamed body to an HTTP/1.1 client.
    case chunked
    /// Neither: a streamed body to an HTTP/1.0 client ends with the connection.
    case close
}
