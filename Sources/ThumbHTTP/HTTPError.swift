/// A protocol-level error the server answers itself (Errors.md codes): a
/// request it cannot read, or a response it has no room for. This layer
/// knows its status, code and message; the application renders the answer
/// (`HTTPApplication.renderError`), so the body every thumbd error carries is
/// decided where the application's own errors are.
public struct HTTPError: Error, Equatable, Sendable {
    public let status: Int
    public let code: String
    public let message: String

    public init(status: Int, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    static func badRequest(_ message: String) -> HTTPError { HTTPError(status: 400, code: "bad_request", message: message) }
    static let requestTimeout = HTTPError(status: 408, code: "request_timeout", message: "request head not received in time")
    static let lengthRequired = HTTPError(status: 411, code: "length_required", message: "request bodies need Content-Length; chunked is not accepted")
    static let payloadTooLarge = HTTPError(status: 413, code: "payload_too_large", message: "request body over 1 MiB")
    static let expectationFailed = HTTPError(status: 417, code: "expectation_failed", message: "the only expectation understood is 100-continue")
    static let uriTooLong = HTTPError(status: 414, code: "uri_too_long", message: "request target longer than 8 KiB")
    static let headersTooLarge = HTTPError(status: 431, code: "headers_too_large", message: "request head too large")
    /// A finished response found no room in `http.maxPendingResponseBytes`,
    /// neither to be written nor to wait (HTTPServer.md, Slow readers).
    /// Same code as a full render queue: either way the client should retry shortly.
    static let noRoomForResponse = HTTPError(status: 503, code: "overloaded",
                                             message: "too many response bytes waiting for slow clients")

    /// How a server renders these until the application sets its own
    /// `HTTPApplication.renderError`: `CODE: MESSAGE` as plain text.
    public static let plainText: Renderer = { error in
        HTTPResponse(status: error.status, headers: [("Content-Type", "text/plain")],
                     body: Array("\(error.code): \(error.message)\n".utf8))
    }

    /// Turns a protocol error into the response that is sent.
    public typealias Renderer = @Sendable (HTTPError) -> HTTPResponse
}
