import ThumbService
import ThumbJSON
import Foundation

/// The bearer token that guards the admin endpoints (API.md § Endpoints): `/stats`,
/// `/metrics`, `/prefetch`, `DELETE /cache`.
enum AdminToken {
    /// True when no token is configured, or `authorization` is
    /// `Bearer TOKEN` with the configured token (scheme case-insensitive, RFC 9110 §11.1).
    static func permits(authorization: String?, token: String?) -> Bool {
        guard let token else { return true }
        guard let authorization else { return false }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return false }
        let given = parts[1].trimmingCharacters(in: .whitespaces)
        return ConstantTime.equals(Array(given.utf8), Array(token.utf8))
    }
}
