import Foundation
import Testing
import ThumbTestSupport
@testable import ThumbAPI

/// Every spelling of one source URL is one original (SourcesAndLimits.md).
@Suite struct SourceSpellingTests {
    /// Over HTTP: one download for two spellings, and a purge by a third spelling finds it.
    @Test func oneOriginalForEverySpellingAndItsPurge() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let dir = NSTemporaryDirectory() + "thumbd-normalize-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let daemon = try EndToEndTests.TestDaemon(store: dir)
        defer { daemon.stop() }
        func enc(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
        let first = daemon.get("/thumbnail?url=\(enc("http://127.0.0.1:\(origin.port)/cat.jpg"))&w=30")
        let second = daemon.get("/thumbnail?url=\(enc("HTTP://127.0.0.1:\(origin.port)/./x/../cat.jpg#top"))&w=30")
        #expect(first.status == 200 && second.status == 200)
        #expect(second.headers["x-cache"] == "memory" && second.headers["etag"] == first.headers["etag"])
        #expect(origin.hits("/cat.jpg") == 1)
        let purge = daemon.get("/cache?url=\(enc("http://127.0.0.1:\(origin.port)/%63at.jpg"))", method: "DELETE")
        #expect(purge.status == 200 && String(decoding: purge.body, as: UTF8.self) != #"{"removed":0}"#)
        #expect(daemon.get("/thumbnail?url=\(enc("http://127.0.0.1:\(origin.port)/cat.jpg"))&w=30").headers["x-cache"] == "origin")
        #expect(origin.hits("/cat.jpg") == 2)
    }
}
