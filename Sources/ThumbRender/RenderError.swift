import ThumbCodec

/// Every way one job on an original's bytes can fail — a probe, a plan, a
/// render, an encode, the facts — whether it runs in-process or in a
/// sandboxed worker (whose engine adds the ways a worker can end).
///
/// The service maps each case onto its own error one to one
/// (`ServiceError.init(_: RenderError)`); these cases are a subset of its
/// cases because a render can fail only in ways a request can. Codable: a
/// worker sends its failure back over its channel.
public enum RenderError: Error, Equatable, Sendable, Codable {
    /// The request's geometry cannot be laid out on this source (`fit=cover`
    /// without both sides, a result over `maxOutputDimension`).
    case badRequest(String)
    case unsupportedFormat(String)
    case imageTooLarge(String)
    case corruptImage(String)
    /// Past the job's deadline (`limits.maxRenderSeconds`).
    case renderTimedOut
    /// The worker running the job died of a signal.
    case workerCrashed(String)
    /// The worker was stopped by its seccomp filter.
    case workerFiltered(String)
    /// The job's allocation failed: its estimate fell short.
    case outOfMemory(String)
    case internalError(String)

    /// A sentence for logs and `thumbd thumbnail`'s message.
    public var message: String {
        switch self {
        case .badRequest(let m), .unsupportedFormat(let m), .imageTooLarge(let m), .corruptImage(let m),
             .workerCrashed(let m), .workerFiltered(let m), .outOfMemory(let m), .internalError(let m):
            m
        case .renderTimedOut: "the render took longer than limits.maxRenderSeconds and was stopped"
        }
    }

    /// The Errors.md code a request failing this way is answered with, for
    /// `thumbd thumbnail`, which has no HTTP answer to carry it. The API's
    /// table (`ServiceError.code`) gives the same code for the mapped error,
    /// which a test checks case by case.
    public var code: String {
        switch self {
        case .badRequest: "bad_request"
        case .unsupportedFormat: "unsupported_format"
        case .imageTooLarge, .outOfMemory: "image_too_large"
        case .corruptImage, .renderTimedOut, .workerCrashed, .workerFiltered: "corrupt_image"
        case .internalError: "internal_error"
        }
    }

    /// The one place codec failures become render errors (SourcesAndLimits.md).
    public init(_ error: CodecError) {
        switch error {
        case .empty: self = .unsupportedFormat("the source is empty")
        case .unsupportedFormat(let m): self = .unsupportedFormat(m)
        case .corrupt(let m): self = .corruptImage(m)
        case .tooLarge(let w, let h): self = .imageTooLarge("source is \(w)x\(h) pixels, over maxSourcePixels")
        case .tooComplex(let m): self = .imageTooLarge(m)
        case .encodeFailed(let m): self = .internalError(m)
        case .deadlineExceeded: self = .renderTimedOut
        }
    }
}
