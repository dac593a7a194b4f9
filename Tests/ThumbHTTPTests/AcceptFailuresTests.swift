import Glibc
import Testing
import ThumbTestSupport
@testable import ThumbHTTP

private typealias AcceptFailures = ThumbHTTP.AcceptFailures<ManualClock>

/// Running out of descriptors (HTTPServer.md): accepting pauses instead
/// of spinning, and a burst of failures is one warning, not one per attempt.
@Suite struct AcceptFailuresTests {
    @Test func aBurstIsOneWarningAndEveryFailurePauses() throws {
        var f = AcceptFailures()
        let first = f.failed(errno: EMFILE, now: at(100))
        #expect(try #require(first.warning).contains("EMFILE") && first.pause == AcceptFailures.pause)
        var warnings = 0
        // One failure every 100 ms for a minute: the same burst.
        for i in 1...600 {
            let o = f.failed(errno: i % 2 == 0 ? EMFILE : ENFILE, now: at(100 + Double(i) / 10))
            #expect(o.pause == AcceptFailures.pause)
            if o.warning != nil { warnings += 1 }
        }
        #expect(warnings == 0 && f.total == 601)
        let later = f.failed(errno: ENFILE, now: at(171))
        #expect(try #require(later.warning).contains("ENFILE") && later.warning!.contains("601 failed accepts"),
                "a new burst after 10 s of quiet, reporting the last one")
    }

    @Test func aFailureOfOneConnectionNeitherPausesNorWarns() {
        var f = AcceptFailures()
        #expect(f.failed(errno: ECONNABORTED, now: at(0)) == AcceptFailures.Outcome())
        #expect(f.total == 0)
    }
}
