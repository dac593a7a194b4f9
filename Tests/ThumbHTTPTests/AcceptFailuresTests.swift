import Glibc
import Testing
import ThumbTestSupport
@testable import ThumbHTTP

private let second: UInt64 = 1_000_000_000

/// Running out of descriptors (HTTPServer.md): accepting pauses instead
/// of spinning, and a burst of failures is one warning, not one per attempt.
@Suite struct AcceptFailuresTests {
    @Test func aBurstIsOneWarningAndEveryFailurePauses() throws {
        var f = AcceptFailures()
        let first = f.failed(errno: EMFILE, now: 100 * second)
        #expect(try #require(first.warning).contains("EMFILE") && first.pause == AcceptFailures.pauseSeconds)
        var warnings = 0
        // One failure every 100 ms for a minute: the same burst.
        for i in 1...600 {
            let o = f.failed(errno: i % 2 == 0 ? EMFILE : ENFILE, now: 100 * second + UInt64(i) * second / 10)
            #expect(o.pause == AcceptFailures.pauseSeconds)
            if o.warning != nil { warnings += 1 }
        }
        #expect(warnings == 0 && f.total == 601)
        let later = f.failed(errno: ENFILE, now: 171 * second)
        #expect(try #require(later.warning).contains("ENFILE") && later.warning!.contains("601 failed accepts"),
                "a new burst after 10 s of quiet, reporting the last one")
    }

    @Test func aFailureOfOneConnectionNeitherPausesNorWarns() {
        var f = AcceptFailures()
        #expect(f.failed(errno: ECONNABORTED, now: 0) == AcceptFailures.Outcome())
        #expect(f.total == 0)
    }
}
