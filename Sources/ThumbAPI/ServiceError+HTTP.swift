import ThumbService
import ThumbJSON
import ThumbHTTP

extension ServiceError {
    /// The one place a service failure becomes an HTTP response (Errors.md).
    public var response: HTTPResponse {
        var headers: [(name: String, value: String)] = []
        if case .methodNotAllowed(let allow) = self { headers.append(("Allow", allow)) }
        // RFC 9110 §11.6.1: a 401 names the scheme it wants.
        if case .unauthorized = self { headers.append(("WWW-Authenticate", "Bearer")) }
        var response = HTTPError(status: status, code: code, message: message).response
        response.headers += headers
        return response
    }

    /// Whether a `/thumbnail` answer with this error says something lasting
    /// about the source (404, 415, 422), so it may be cached briefly
    /// (API.md § Output); the render-deadline 422 depends on load and is not.
    public var isLasting: Bool {
        if case .renderTimedOut = self { return false }
        return [404, 415, 422].contains(status)
    }
}
