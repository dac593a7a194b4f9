import Foundation
import Testing
@testable import ThumbFetch
@testable import ThumbService

/// RFC 3986 §6.2.2–6.2.3 normalization of source URLs, and what it buys: one source per spelling.
struct URLNormalizationTests {
    @Test(arguments: [
        ("HTTP://CDN.Example.COM/a.jpg", "http://cdn.example.com/a.jpg"),
        ("http://cdn.example:80/a.jpg", "http://cdn.example/a.jpg"),
        ("https://cdn.example:443/a.jpg", "https://cdn.example/a.jpg"),
        ("http://cdn.example:/a.jpg", "http://cdn.example/a.jpg"),
        ("http://cdn.example:0080/a.jpg", "http://cdn.example/a.jpg"),
        ("http://cdn.example:8080/a.jpg", "http://cdn.example:8080/a.jpg"),
        ("https://cdn.example:80/a.jpg", "https://cdn.example:80/a.jpg"),
        ("http://cdn.example", "http://cdn.example/"),
        ("http://cdn.example?x=1", "http://cdn.example/?x=1"),
        ("http://cdn.example/a/./b/../c.jpg", "http://cdn.example/a/c.jpg"),
        ("http://cdn.example/../../a.jpg", "http://cdn.example/a.jpg"),
        ("http://cdn.example/a/b/..", "http://cdn.example/a/"),
        ("http://cdn.example/%7Euser/%61.jpg", "http://cdn.example/~user/a.jpg"),
        ("http://cdn.example/a%2fb%3a.jpg", "http://cdn.example/a%2Fb%3A.jpg"),
        ("http://cdn.example/a.jpg#frag", "http://cdn.example/a.jpg"),
        ("http://cdn.example/a.jpg?B=%7e&a=%2f#x", "http://cdn.example/a.jpg?B=%7e&a=%2f"),
        ("http://[::1]:80/a.jpg", "http://[::1]/a.jpg"),
        ("http://[FE80::1]:8080/a.jpg", "http://[fe80::1]:8080/a.jpg"),
        ("http://Bob@Cdn.Example/a.jpg", "http://Bob@cdn.example/a.jpg"),
        ("http://cdn.example/a.jpg?../x", "http://cdn.example/a.jpg?../x"),
    ])
    func spellingsNormalize(_ input: String, _ expected: String) {
        #expect(URLNormalization.normalize(input) == expected)
    }

    @Test func hostOfANormalizedURL() {
        #expect(URLNormalization.host(ofNormalized: "http://cdn.example/a.jpg") == "cdn.example")
        #expect(URLNormalization.host(ofNormalized: "http://cdn.example:8080?x=@y") == "cdn.example")
        #expect(URLNormalization.host(ofNormalized: "http://u@cdn.example:1/a@b") == "cdn.example")
        #expect(URLNormalization.host(ofNormalized: "http://[::1]:8080/a.jpg") == "::1")
        #expect(URLNormalization.host(ofNormalized: "cdn.example/a.jpg") == nil)
    }

    @Test func notAURLIsLeftAlone() {
        #expect(URLNormalization.normalize("cdn.example/a.jpg") == nil)
        #expect(URLNormalization.normalize("://a") == nil)
        #expect(URLNormalization.normalize("http:/a") == nil)
    }

    @Test func requestsOfTwoSpellingsShareOneSource() throws {
        let config = ServiceConfiguration()
        let a = try ThumbnailRequest(query: [("url", "HTTP://Cdn.Example:80/x/../a.jpg#f"), ("w", "10")], config: config)
        let b = try ThumbnailRequest(query: [("url", "http://cdn.example/a.jpg"), ("w", "10")], config: config)
        #expect(a == b && a.sourceURL == "http://cdn.example/a.jpg")
    }

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
