import Foundation
@testable import ThumbFetch
import ThumbRender
@testable import ThumbService

/// A service fetching from loopback origins, with a disk store of its own in
/// a fresh temporary directory named after `name`, and no render deadline a
/// loaded debug build could reach (a test that wants one sets it in `change`).
func loopbackService<C: Clock>(_ name: String, storeBytes: Int = 10 << 20, engine: any RenderEngine = InProcessEngine(),
                               clock: C = ContinuousClock(),
                               _ change: (inout ServiceConfiguration) -> Void = { _ in }) throws -> ThumbnailService
where C.Duration == Duration {
    var c = ServiceConfiguration()
    c.origin.allowPrivateNetworks = true
    c.limits.maxRenderSeconds = 600
    change(&c)
    let store = NSTemporaryDirectory() + "thumbd-\(name)-\(UUID().uuidString)"
    return ThumbnailService(configuration: c, fetcher: Fetcher(policy: FetchPolicy(configuration: c)),
                            disk: try DiskStore(directory: store, maxBytes: storeBytes), clock: clock, engine: engine)
}

/// A thumbnail request for `url` with the other parameters of `query`.
func thumbnailRequest(_ url: String, _ query: [(String, String)] = [("w", "50")]) throws -> ThumbnailRequest {
    try ThumbnailRequest(query: [(name: "url", value: url)] + query.map { (name: $0.0, value: $0.1) },
                         config: ServiceConfiguration())
}
