import Foundation
import Testing
import ThumbTestSupport
@testable import ThumbAPI
@testable import ThumbService

/// Configuration.md `limits.maxRenderSeconds` through the real daemon:
/// a render past its deadline is `422 corrupt_image` with `no-store`, and is
/// not remembered, so the next request renders again.
@Suite(.serialized) struct RenderDeadlineServiceTests {
    private func target(_ origin: TestOrigin, _ path: String) -> String {
        "/thumbnail?url=" + origin.url(path).addingPercentEncoding(withAllowedCharacters: .alphanumerics)! + "&w=64&format=png"
    }

    /// A 1440×960 HEIC takes tens of milliseconds to decode; 1 ms is always
    /// past when its first row is read.
    @Test func aRenderPastItsDeadlineIs422NoStoreAndNotRemembered() throws {
        try EndToEndTests.withDaemon({ $0.service.limits.maxRenderSeconds = 0.001 }) { daemon, origin in
            let path = "/formats/crowd_1440x960.heic"
            let first = daemon.get(target(origin, path))
            #expect(first.status == 422 && first.headers["cache-control"] == "no-store")
            let body = String(decoding: first.body, as: UTF8.self)
            #expect(body.contains("\"corrupt_image\"") && body.contains("maxRenderSeconds"))
            #expect(daemon.service.statistics.counters.renderFailures == 1)

            // Not replayed from the negative cache: rendered (and stopped) again.
            let second = daemon.get(target(origin, path))
            #expect(second.status == 422 && second.headers["cache-control"] == "no-store")
            #expect(daemon.service.statistics.counters.renderFailures == 2)
            #expect(origin.hits(path) == 1)   // the original is on disk; only the render repeats

            // With time to render, the same source is served.
            var relaxed = daemon.service.config
            relaxed.limits.maxRenderSeconds = 10
            daemon.service.reload(relaxed)
            let third = daemon.get(target(origin, path))
            #expect(third.status == 200 && third.headers["x-image-width"] == "64")
        }
    }

    /// A corrupt source is still remembered and cached briefly, unlike the deadline.
    @Test func otherCorruptImagesKeepTheirLastingAnswer() throws {
        try EndToEndTests.withDaemon({ $0.service.limits.maxRenderSeconds = 10 }) { daemon, origin in
            let truncated = daemon.get(target(origin, "/truncated.jpg"))
            #expect(truncated.status == 422 && truncated.headers["cache-control"] == "public, max-age=10")
        }
        #expect(ServiceError.renderTimedOut.lifetime == .momentary && ServiceError.corruptImage("x").lifetime == .lasting)
        #expect(ServiceError.renderTimedOut.status == 422 && ServiceError.renderTimedOut.code == "corrupt_image")
    }

    @Test func maxRenderSecondsIsReadAndValidated() throws {
        #expect(ServiceConfiguration().limits.maxRenderSeconds == 10)
        let c = try DaemonConfiguration.parse(Array(#"{"limits": {"maxRenderSeconds": 0.25}}"#.utf8))
        #expect(c.service.limits.maxRenderSeconds == 0.25)
        let roundTrip = try DaemonConfiguration.parse(Array(c.json.serialized(indent: 2).utf8))
        #expect(roundTrip.service.limits.maxRenderSeconds == 0.25)
        for bad in [#"0"#, #"-1"#, #""10""#, #"100000"#] {
            #expect(throws: ConfigurationError.self) {
                try DaemonConfiguration.parse(Array(#"{"limits": {"maxRenderSeconds": \#(bad)}}"#.utf8))
            }
            do {
                _ = try DaemonConfiguration.parse(Array(#"{"limits": {"maxRenderSeconds": \#(bad)}}"#.utf8))
            } catch {
                #expect(error.key == "limits.maxRenderSeconds")
            }
        }
    }
}
