
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
