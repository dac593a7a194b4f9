/// A response to serialize and write, with what the access log records.
struct OutgoingResponse {
    /// For HEAD, `omitBody` is set.
    var response: HTTPResponse
    /// `Connection: keep-alive` rather than `close`.
    var keepAlive: Bool
    /// `-` for the server's own errors.
    var method: String
    var path: String
    /// Since the request was handed to the handler (zero for the server's own errors).
    var elapsed: Duration
    /// `100 Continue`: a bare status line, not a response (not logged, counted or charged).
    var isInterim = false

    init(response: HTTPResponse, keepAlive: Bool, method: String, path: String, elapsed: Duration) {
        self.response = response
        self.keepAlive = keepAlive
        self.method = method
        self.path = path
        self.elapsed = elapsed
    }

    /// The interim answer to `Expect: 100-continue`.
    static var `continue`: OutgoingResponse {
        var interim = OutgoingResponse(response: HTTPResponse(status: 100), keepAlive: true, method: "-", path: "-",
                                       elapsed: .zero)
        interim.isInterim = true
        return interim
    }

    /// The server's own error answer, rendered; the connection closes after it.
    init(error: HTTPResponse) {
        self.init(response: error, keepAlive: false, method: "-", path: "-", elapsed: .zero)
    }
}
