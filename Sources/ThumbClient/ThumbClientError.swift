import Foundation

/// Why a call to thumbd failed. A server's answer keeps its error code
/// (Errors.md: `source_not_found`, `bad_signature`, `overloaded`, …) so an app
/// can tell a missing image from a bad request or a busy server.
public enum ThumbClientError: Error, Equatable, Sendable {
    /// thumbd answered with an error: its status, `error` code and `message`.
    case server(status: Int, code: String, message: String)
    /// The transport failed (connection refused, timed out, …): the description.
    case transport(String)
    /// The answer was not what thumbd sends (not JSON, a missing field).
    case malformedAnswer(String)
    /// What the caller asked for cannot be a valid request (a size of 0, a
    /// source that is not an absolute http(s) URL).
    case invalidRequest(String)
    /// The task was cancelled; its request was cancelled with it.
    case cancelled

    /// The server's error code, when thumbd gave one.
    public var code: String? {
        if case .server(_, let code, _) = self { return code }
        return nil
    }

    /// An error answer's status and body as thumbd writes them (`{"error": CODE, "message": TEXT}`).
    static func from(status: Int, body: Data) -> ThumbClientError {
        struct Answer: Decodable { let error: String; let message: String }
        guard let answer = try? JSONDecoder().decode(Answer.self, from: body) else {
            return .server(status: status, code: "http_\(status)", message: String(decoding: body.prefix(200), as: UTF8.self))
        }
        return .server(status: status, code: answer.error, message: answer.message)
    }

    /// A thrown error as one of these: `CancellationError` and `URLError.cancelled` are `.cancelled`.
    static func wrap(_ error: any Error) -> ThumbClientError {
        if let own = error as? ThumbClientError { return own }
        if error is CancellationError { return .cancelled }
        if let url = error as? URLError, url.code == .cancelled { return .cancelled }
        return .transport(String(describing: error))
    }
}
