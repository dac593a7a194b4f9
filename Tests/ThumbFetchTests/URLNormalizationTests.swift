import Foundation
import Testing
@testable import ThumbFetch

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
}
