import ThumbHTTP
import ThumbJSON
import ThumbService

/// The one place a failure becomes an HTTP answer (Errors.md): its status, the
/// `{"error": CODE, "message": TEXT}` body, `Retry-After`, `Allow`,
/// `WWW-Authenticate`, and whether anyone downstream may cache it. The
/// service's failures (`ServiceError`) and the HTTP server's own
/// (`HTTPError`, through `HTTPApplication.renderError`) both end here.
enum ErrorResponse {
    /// The JSON error response. A `503` (overload, whichever layer saw it)
    /// tells the client when to retry.
    static func json(status: Int, code: String, message: String) -> HTTPResponse {
        let body = JSONValue.object([("error", .string(code)), ("message", .string(message))]).serialized()
        return HTTPResponse.json(status: status, body, headers: status == 503 ? [("Retry-After", "1")] : [])
    }

    /// The server's own errors (408, 413, 431, the no-room 503, …), rendered
    /// like every other thumbd error.
    static let render: HTTPError.Renderer = { json(status: $0.status, code: $0.code, message: $0.message) }
}

/// Every failure thumbd answers with: the service's (`ServiceError`), and
/// the API layer's own refusals, which the service never sees — an unknown
/// path, a method the route does not take, a missing bearer token, a wrong
/// signature.
public enum APIError: Error, Equatable, Sendable {
    case service(ServiceError)
    case unauthorized
    case badSignature
    case notFound
    case methodNotAllowed(allow: String)

    /// The HTTP status Errors.md assigns.
    public var status: Int {
        switch self {
        case .unauthorized: 401
        case .badSignature: 403
        case .notFound: 404
        case .methodNotAllowed: 405
        case .service(let error):
            switch error {
            case .badRequest: 400
            case .forbiddenSource: 403
            case .sourceNotFound: 404
            case .unsupportedFormat: 415
            case .sourceTooLarge, .imageTooLarge, .corruptImage, .renderTimedOut, .workerCrashed, .workerFiltered,
                 .outOfMemory: 422
            case .internalError: 500
            case .originError: 502
            case .overloaded: 503
            case .originTimeout: 504
            }
        }
    }

    /// The JSON `error` code Errors.md assigns.
    public var code: String {
        switch self {
        case .unauthorized: "unauthorized"
        case .badSignature: "bad_signature"
        case .notFound: "not_found"
        case .methodNotAllowed: "method_not_allowed"
        case .service(let error):
            switch error {
            case .badRequest: "bad_request"
            case .forbiddenSource: "forbidden_source"
            case .sourceNotFound: "source_not_found"
            case .unsupportedFormat: "unsupported_format"
            case .sourceTooLarge: "source_too_large"
            case .imageTooLarge, .outOfMemory: "image_too_large"
            case .corruptImage, .renderTimedOut, .workerCrashed, .workerFiltered: "corrupt_image"
            case .internalError: "internal_error"
            case .originError: "origin_error"
            case .overloaded: "overloaded"
            case .originTimeout: "origin_timeout"
            }
        }
    }

    /// A human-readable explanation for the JSON `message` field.
    public var message: String {
        switch self {
        case .unauthorized: "missing or wrong bearer token"
        case .badSignature: "signature missing or wrong"
        case .notFound: "no such path"
        case .methodNotAllowed(let allow): "method not allowed; allowed: \(allow)"
        case .service(let error): error.message
        }
    }

    /// Whether a client or CDN may cache the answer (`ServiceError.Lifetime`);
    /// the API's own refusals depend on the request, so never.
    var isLasting: Bool {
        if case .service(let error) = self { return error.lifetime == .lasting }
        return false
    }

    /// The answer of any route but `/thumbnail`: errors there are never cached.
    public var response: HTTPResponse {
        var response = ErrorResponse.json(status: status, code: code, message: message)
        if case .methodNotAllowed(let allow) = self { response.headers.append(("Allow", allow)) }
        // RFC 9110 §11.6.1: a 401 names the scheme it wants.
        if case .unauthorized = self { response.headers.append(("WWW-Authenticate", "Bearer")) }
        return response
    }

    /// A `/thumbnail` answer: a fact about the source (`lifetime` `.lasting`:
    /// 404, 415, 422) may be cached for `output.errorMaxAgeSeconds`, so a CDN
    /// does not hammer it; anything else, refusals and outages among them,
    /// is `no-store`, or an outage is cached (API.md § Output). `varies`: the
    /// format was negotiated, so the answer depends on `Accept`.
    func thumbnailResponse(_ output: ServiceConfiguration.Output, varies: Bool) -> HTTPResponse {
        var response = self.response
        response.headers.append(("Cache-Control", isLasting ? "public, max-age=\(output.errorMaxAgeSeconds)" : "no-store"))
        if varies { response.headers.append(("Vary", "Accept")) }
        return response
    }
}

extension ServiceError {
    public var status: Int { APIError.service(self).status }
    public var code: String { APIError.service(self).code }
    public var response: HTTPResponse { APIError.service(self).response }

    func thumbnailResponse(_ output: ServiceConfiguration.Output, varies: Bool) -> HTTPResponse {
        APIError.service(self).thumbnailResponse(output, varies: varies)
    }
}

extension HTTPResponse {
    /// A JSON response (the body already serialized).
    static func json(status: Int, _ text: String, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: Array(text.utf8))
    }
}
