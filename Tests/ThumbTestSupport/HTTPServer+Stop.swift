import Foundation
import Testing
import ThumbHTTP

extension HTTPServer {
    /// Stops a test's server at the end of the test: the listener closes and
    /// every connection with it (no grace period), and this waits (≤ 5 s) until
    /// none is left. A running server stays reachable from Dispatch's sources,
    /// so LeakSanitizer could not report a leak inside it; a stopped one is
    /// freed, and a cycle that keeps it alive shows up.
    public func stop(sourceLocation: SourceLocation = #_sourceLocation) {
        let done = DispatchSemaphore(value: 0)
        drain(deadline: 0) { done.signal() }
        #expect(done.wait(timeout: .now() + 5) == .success, "connections still open 5 s after the stop",
                sourceLocation: sourceLocation)
    }
}
