import Dispatch
import Synchronization
@testable import ThumbService

/// The service's answer to one request, waited for at most `timeout` seconds
/// (a render that never answers fails the test as an internal error instead
/// of hanging the suite). Shared by the service tests that ask one at a time.
func answer(_ service: ThumbnailService, _ r: ThumbnailRequest,
            timeout: Double = 60) -> Result<ThumbnailResult, ServiceError> {
    let done = DispatchSemaphore(value: 0)
    let box = Mutex<Result<ThumbnailResult, ServiceError>?>(nil)
    service.thumbnail(r) { result in
        box.withLock { $0 = result }
        done.signal()
    }
    _ = done.wait(timeout: .now() + timeout)
    return box.withLock { $0 } ?? .failure(.internalError("no answer within \(timeout) s"))
}
