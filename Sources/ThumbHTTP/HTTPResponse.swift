import ThumbJSON

/// A response to send. The body is an array, so a cached body is shared, not
/// copied, when many responses carry it.
public struct HTTPResponse: Sendable {
    public var status: Int
    /// Extra header fields; the server adds Date, Server, Content-Length and Connection.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// For HEAD: send the headers of the GET, including its Content-Length, but no body.
    public var omitBody = false
    /// Header lines already on the wire format (`Name: value\r\n` each), sent
    /// after `headers`: an answer served many times builds its fields once.
    /// `header(_:)` does not see them.
    public var preparedFields: [UInt8] = []

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of a header, names compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { HeaderName.equal($0.name, name) }?.value
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 202: "Accepted"
        case 204: "No Content"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 417: "Expectation Failed"
        case 422: "Unprocessable Content"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status \(status)"
        }
    }
}

/// A protocol-level error the server answers itself (Errors.md codes), with the
/// JSON body every thumbd error carries.
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

    /// The JSON error response: `{"error": CODE, "message": TEXT}`. A `503`
    /// (overload, whichever layer saw it) tells the client when to retry.
    public var response: HTTPResponse {
        let body = JSONValue.object([("error", .string(code)), ("message", .string(message))]).serialized()
        return HTTPResponse.json(status: status, body, headers: status == 503 ? [("Retry-After", "1")] : [])
    }
}

extension HTTPResponse {
    /// A JSON response.
    public static func json(status: Int, _ text: String, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: Array(text.utf8))
    }
}
