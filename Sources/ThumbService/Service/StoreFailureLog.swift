import Synchronization
import ThumbFetch

/// Tells the operator's log why their own S3 store failed a download
/// (S3Sources.md): `S3 answered 403 SignatureDoesNotMatch`
/// means wrong credentials, `AccessDenied` a missing permission, a timeout a
/// slow store. Failures of `http` origins are the client's choice of URL and
/// are not logged; neither are an s3 source's `404` and refusals.
final class StoreFailureLog: Sendable {
    private let sink = Mutex<(@Sendable (String) -> Void)?>(nil)

    func set(_ log: (@Sendable (String) -> Void)?) { sink.withLock { $0 = log } }

    func note(_ error: ServiceError, source: String) {
        guard S3Location.hasScheme(source), let log = sink.withLock({ $0 }) else { return }
        switch error {
        case .originError(let message), .originTimeout(let message): log("\(source): \(message)")
        default: break
        }
    }
}
