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

    /// SourcesAndLimits.md § Hosts: every spelling of a loopback address is
    /// refused as loopback (`403 forbidden_source`), before any connection —
    /// the origin listening there sees none. They used to reach libcurl,
    /// which read them as 127.0.0.1 where thumbd had seen a name, and came
    /// back `502` with libcurl's message.
    @Test func loopbackSpellingsAre403WithoutAConnection() throws {
        try EndToEndTests.withDaemon({ $0.service.origin.allowPrivateNetworks = false }) { daemon, origin in
            func enc(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
            let port = origin.port
            for spelling in ["127.1", "2130706433", "0x7f.0.0.1", "0177.0.0.1", "0x7f000001", "127.0.0.1.", "[0:0::1]"] {
                let r = daemon.get("/thumbnail?url=\(enc("http://\(spelling):\(port)/cat.jpg"))&w=30")
                let body = String(decoding: r.body, as: UTF8.self)
                #expect(r.status == 403 && body.contains("forbidden_source"), "\(spelling): \(r.status) \(body)")
                #expect(body.contains("loopback"), "\(spelling): \(body)")
            }
            #expect(origin.server.statistics.connectionsAccepted == 0)
            #expect(origin.totalHits == 0)
        }
    }

    /// A zone identifier, a bracketed name, or a number that is no address
    /// is a malformed URL: `400`, and nothing is fetched.
    @Test func zoneIdentifiersAndBracketedNamesAre400() throws {
        try EndToEndTests.withDaemon { daemon, origin in
            func enc(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
            let port = origin.port
            for host in ["[::1%25lo]", "[localhost]", "[127.0.0.1]", "127.0.0.256", "localhost.1"] {
                let r = daemon.get("/thumbnail?url=\(enc("http://\(host):\(port)/cat.jpg"))&w=30")
                let body = String(decoding: r.body, as: UTF8.self)
                #expect(r.status == 400 && body.contains("bad_request"), "\(host): \(r.status) \(body)")
            }
            #expect(origin.server.statistics.connectionsAccepted == 0)
        }
    }
}
