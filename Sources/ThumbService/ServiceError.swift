/// Every way a thumbd request can fail, one case per Errors.md error code.
///
/// `status` and `code` are the only mapping from failures to HTTP: every layer
/// below converts its own typed error into one of these cases. The HTTP layer
/// answers the errors of a request it cannot read (413, 414, 431, 408, …)
/// itself, before any of this runs.
public enum ServiceError: Error, Equatable, Sendable {
    case badRequest(String)
    case unauthorized
    case forbiddenSource(String)
    case badSignature
    case notFound
    case sourceNotFound
    case methodNotAllowed(allow: String)
    case unsupportedFormat(String)
    case sourceTooLarge(limit: Int)
    case imageTooLarge(String)
    case corruptImage(String)
    /// The render ran past `limits.maxRenderSeconds` and was stopped: answered
    /// like `corruptImage` but never remembered or cached, since load can cause it.
    case renderTimedOut
    case internalError(String)
    case originError(String)
    case overloaded
    case originTimeout(String)

    /// The HTTP status Errors.md assigns.
    public var status: Int {
        switch self {
        case .badRequest: 400
        case .unauthorized: 401
        case .forbiddenSource, .badSignature: 403
        case .notFound, .sourceNotFound: 404
        case .methodNotAllowed: 405
        case .unsupportedFormat: 415
        case .sourceTooLarge, .imageTooLarge, .corruptImage, .renderTimedOut: 422
        case .internalError: 500
        case .originError: 502
        case .overloaded: 503
        case .originTimeout: 504
        }
    }

    /// The JSON `error` code Errors.md assigns.
    public var code: String {
        switch self {
        case .badRequest: "bad_request"
        case .unauthorized: "unauthorized"
        case .forbiddenSource: "forbidden_source"
        case .badSignature: "bad_signature"
        case .notFound: "not_found"
        case .sourceNotFound: "source_not_found"
        case .methodNotAllowed: "method_not_allowed"
        case .unsupportedFormat: "unsupported_format"
        case .sourceTooLarge: "source_too_large"
        case .imageTooLarge: "image_too_large"
        case .corruptImage, .renderTimedOut: "corrupt_image"
        case .internalError: "internal_error"
        case .originError: "origin_error"
        case .overloaded: "overloaded"
        case .originTimeout: "origin_timeout"
        }
    }

    /// A human-readable explanation for the JSON `message` field and logs.
    public var message: String {
        switch self {
        case .badRequest(let m), .forbiddenSource(let m), .unsupportedFormat(let m),
             .imageTooLarge(let m), .corruptImage(let m), .originError(let m), .originTimeout(let m):
            m
        case .internalError: "internal error"
        case .unauthorized: "missing or wrong bearer token"
        case .badSignature: "signature missing or wrong"
        case .notFound: "no such path"
        case .sourceNotFound: "the origin has no such image"
        case .methodNotAllowed(let allow): "method not allowed; allowed: \(allow)"
        case .sourceTooLarge(let limit): "source larger than \(limit) bytes"
        case .overloaded: "render queue full; retry later"
        case .renderTimedOut: "the render took longer than limits.maxRenderSeconds and was stopped"
        }
    }
}
