import ThumbService
import ThumbJSON
import ThumbHTTP

extension ServiceError {
    /// The one place a service failure becomes an HTTP response (README § Errors).
    public var response: HTTPResponse {
        var headers: [(name: String, value: String)] = []
        if case .overloaded = self { headers.append(("Retry-After", "1")) }
        if case .methodNotAllowed(let allow) = self { headers.append(("Allow", allow)) }
        let body = JSONValue.object([("error", .string(code)), ("message", .string(message))]).serialized()
        return HTTPResponse.json(status: status, body, headers: headers)
    }
}
