import ThumbRender

/// Every way a thumbd request can fail, one case per Errors.md error code.
///
/// Every layer below converts its own typed error into one of these cases;
/// ThumbAPI's `ErrorResponse.swift` is the one place they become HTTP
/// (status, code, body, headers, caching). The HTTP layer answers the errors
/// of a request it cannot read (413, 414, 431, 408, …) itself, before any of
/// this runs.
public enum ServiceError: Error, Equatable, Sendable, Codable {
    case badRequest(String)
    case forbiddenSource(String)
    case sourceNotFound
    case unsupportedFormat(String)
    case sourceTooLarge(limit: Int)
    case imageTooLarge(String)
    case corruptImage(String)
    /// The render ran past `limits.maxRenderSeconds` and was stopped: answered
    /// like `corruptImage` but never remembered or cached, since load can cause it.
    case renderTimedOut
    /// The worker process running the job died of a signal (a decoder
    /// crashed, or an allocation past its memory cap failed where nothing
    /// could recover): answered like `corruptImage`, never remembered — the
    /// next try gets a fresh worker (Isolation.md).
    case workerCrashed(String)
    /// The worker was stopped by its seccomp filter for a call only an attack
    /// makes: answered like `corruptImage`, never remembered, and not counted
    /// among the crashes that get a source refused (SPEC §16).
    case workerFiltered(String)
    /// The job's allocation failed (the worker said so before it ended): the
    /// estimate it was admitted with fell short. Answered `422
    /// image_too_large`, never remembered: it depends on the variant (SPEC §16).
    case outOfMemory(String)
    case internalError(String)
    case originError(String)
    case overloaded
    case originTimeout(String)

    /// A human-readable explanation for the JSON `message` field and logs.
    public var message: String {
        switch self {
        case .badRequest(let m), .forbiddenSource(let m), .unsupportedFormat(let m), .workerCrashed(let m),
             .workerFiltered(let m), .outOfMemory(let m),
             .imageTooLarge(let m), .corruptImage(let m), .originError(let m), .originTimeout(let m):
            m
        case .internalError: "internal error"
        case .sourceNotFound: "the origin has no such image"
        case .sourceTooLarge(let limit): "source larger than \(limit) bytes"
        case .overloaded: "render queue full; retry later"
        case .renderTimedOut: "the render took longer than limits.maxRenderSeconds and was stopped"
        }
    }

    /// Who may keep a failure, and so replay it without asking the origin
    /// again. The negative cache keeps what is not `.momentary`; a client or
    /// CDN may cache only what is `.lasting` (SourcesAndLimits.md, API.md § Output).
    public enum Lifetime: Sendable {
        /// Caused by load, time or the request itself (timeouts, overload,
        /// refusals, an unknown path, a render stopped at its deadline): kept by nobody.
        case momentary
        /// The origin failed (502): remembered for `origin.negativeCacheSeconds`
        /// to spare it a storm, but never cached downstream, or an outage is cached.
        case remembered
        /// A fact about the source itself (404, 415, 422): remembered, and
        /// cacheable for `output.errorMaxAgeSeconds`.
        case lasting
    }

    public var lifetime: Lifetime {
        switch self {
        case .sourceNotFound, .unsupportedFormat, .corruptImage, .imageTooLarge, .sourceTooLarge: .lasting
        case .originError: .remembered
        case .badRequest, .forbiddenSource, .renderTimedOut, .workerCrashed, .workerFiltered, .outOfMemory, .internalError, .overloaded, .originTimeout: .momentary
        }
    }
}

extension ServiceError {
    /// A job's failure (`RenderError`, whichever engine ran it) as the
    /// request's: one to one, the render's cases being a subset of these.
    public init(_ error: RenderError) {
        switch error {
        case .badRequest(let m): self = .badRequest(m)
        case .unsupportedFormat(let m): self = .unsupportedFormat(m)
        case .imageTooLarge(let m): self = .imageTooLarge(m)
        case .corruptImage(let m): self = .corruptImage(m)
        case .renderTimedOut: self = .renderTimedOut
        case .workerCrashed(let m): self = .workerCrashed(m)
        case .workerFiltered(let m): self = .workerFiltered(m)
        case .outOfMemory(let m): self = .outOfMemory(m)
        case .internalError(let m): self = .internalError(m)
        }
    }
}

/// Runs a job of the render layer in a service context: its `RenderError`
/// becomes the request's `ServiceError`.
func rendering<T>(_ body: () throws(RenderError) -> T) throws(ServiceError) -> T {
    do {
        return try body()
    } catch {
        throw ServiceError(error)
    }
}
