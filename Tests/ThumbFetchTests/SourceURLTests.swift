import Testing
@testable import ThumbFetch

/// A source URL taken apart (API.md § GET /thumbnail `url`, §6): pure parsing, no network.
@Suite struct SourceURLTests {
    @Test func takesAnHTTPURLApart() throws {
        let url = try SourceURL("http://images.example.com/cats/a%20b.jpg?size=large&v=2")
        #expect(url.scheme == "http" && url.host == "images.example.com" && url.port == 80)
        #expect(url.target == "/cats/a%20b.jpg?size=large&v=2", "path and query stay percent-encoded")
        #expect(url.absolute == "http://images.example.com/cats/a%20b.jpg?size=large&v=2")
        #expect(url.hostHeader == "images.example.com")
    }

    @Test func schemeAndHostAreCaseInsensitiveAndAnEmptyPathIsSlash() throws {
        let url = try SourceURL("HTTPS://Images.Example.COM")
        #expect(url.scheme == "https" && url.host == "images.example.com" && url.port == 443)
        #expect(url.target == "/")
        let query = try SourceURL("http://h.example?x=1")
        #expect(query.target == "/?x=1")
    }

    @Test(arguments: [("http://h.example/", UInt16(80), "h.example"),
                      ("http://h.example:80/", 80, "h.example"),
                      ("https://h.example/", 443, "h.example"),
                      ("https://h.example:443/", 443, "h.example"),
                      ("http://h.example:443/", 443, "h.example:443"),
                      ("https://h.example:80/", 80, "h.example:80"),
                      ("http://h.example:8080/", 8080, "h.example:8080"),
                      ("http://h.example:/", 80, "h.example")])
    func defaultPortsAreLeftOutOfTheHostHeader(_ text: String, _ port: UInt16, _ hostHeader: String) throws {
        let url = try SourceURL(text)
        #expect(url.port == port)
        #expect(url.hostHeader == hostHeader)
    }

    @Test func ipv6LiteralsLoseTheirBracketsButKeepThemInTheHostHeader() throws {
        let url = try SourceURL("http://[::1]:8080/a.png")
        #expect(url.host == "::1" && url.port == 8080 && url.target == "/a.png")
        #expect(url.hostHeader == "[::1]:8080")
        let defaultPort = try SourceURL("https://[2001:DB8::1]/")
        #expect(defaultPort.host == "2001:db8::1" && defaultPort.port == 443)
        #expect(defaultPort.hostHeader == "[2001:db8::1]")
        let ipv4 = try SourceURL("http://127.0.0.1:9/x")
        #expect(ipv4.host == "127.0.0.1" && ipv4.hostHeader == "127.0.0.1:9")
    }

    @Test(arguments: ["ftp://h.example/a.jpg", "file:///etc/passwd", "gopher://h.example/", "data:image/png;base64,AAAA"])
    func onlyHTTPAndHTTPSAreAllowed(_ text: String) {
        #expect(throws: FetchError.forbidden("only http and https sources are allowed")) { try SourceURL(text) }
    }

    @Test(arguments: ["http://user@h.example/a.jpg", "http://user:secret@h.example/a.jpg",
                      "https://:secret@h.example/", "http://user:@h.example/"])
    func credentialsAreRefused(_ text: String) {
        #expect(throws: FetchError.badURL("url must not carry credentials")) { try SourceURL(text) }
    }

    @Test(arguments: ["", "a.jpg", "/cats/a.jpg", "//h.example/a.jpg", "http//h.example/"])
    func relativeURLsAreRefused(_ text: String) {
        #expect(throws: FetchError.badURL("url is not an absolute URL")) { try SourceURL(text) }
    }

    @Test(arguments: ["http:///a.jpg", "http://:8080/a.jpg"])
    func aHostIsRequired(_ text: String) {
        #expect(throws: FetchError.badURL("url has no host")) { try SourceURL(text) }
    }

    @Test(arguments: ["http://h.example:0/", "http://h.example:65536/"])
    func portsOutsideOneTo65535AreRefused(_ text: String) {
        #expect(throws: FetchError.badURL("url has an invalid port")) { try SourceURL(text) }
    }

    @Test func anUnparsablePortIsABadURL() {
        #expect {
            try SourceURL("http://h.example:99999999999999999999/")
        } throws: { error in
            guard case .badURL = error as? FetchError else { return false }
            return true
        }
    }

    /// Internationalized names are fetched by their ASCII (punycode) form;
    /// a host written in Unicode, or hiding bytes behind percent-escapes, is refused.
    @Test func nonASCIIHostsAreRefusedAndPunycodeIsKept() throws {
        let punycode = try SourceURL("http://xn--bcher-kva.example/a.jpg")
        #expect(punycode.host == "xn--bcher-kva.example")
        #expect(punycode.hostHeader == "xn--bcher-kva.example")
        #expect(try SourceURL("http://XN--BCHER-KVA.example:81/").hostHeader == "xn--bcher-kva.example:81")
        for text in ["http://bücher.example/a.jpg", "http://b%C3%BCcher.example/a.jpg", "http://h%20x.example/"] {
            #expect(throws: FetchError.badURL("url host must be ASCII (use punycode)"), "\(text)") { try SourceURL(text) }
        }
    }

    @Test func nonASCIIPathsArePercentEncodedOnTheRequestLine() throws {
        let url = try SourceURL("http://h.example/ü.jpg")
        #expect(url.target == "/%C3%BC.jpg")
    }

    @Test(arguments: [("b.jpg", "http://h.example/dir/b.jpg"),
                      ("../up.jpg", "http://h.example/up.jpg"),
                      ("/abs.jpg", "http://h.example/abs.jpg"),
                      ("?v=2", "http://h.example/dir/a.jpg?v=2"),
                      ("//cdn.example/z.jpg", "http://cdn.example/z.jpg"),
                      ("https://other.example:8443/y.jpg", "https://other.example:8443/y.jpg")])
    func redirectsResolveAgainstTheCurrentURL(_ location: String, _ expected: String) throws {
        let base = try SourceURL("http://h.example/dir/a.jpg?v=1")
        let next = try base.resolve(location)
        #expect(next == (try SourceURL(expected)))
    }

    @Test func aRedirectKeepsTheRulesOfASource() throws {
        let base = try SourceURL("https://h.example/a.jpg")
        #expect(throws: FetchError.forbidden("only http and https sources are allowed")) {
            try base.resolve("ftp://h.example/a.jpg")
        }
        let resolved = try base.resolve("//[::1]:8443/b.jpg")
        #expect(resolved.scheme == "https" && resolved.host == "::1" && resolved.port == 8443)
    }

    /// SourcesAndLimits.md: a `Location` that is unparsable, has no host or carries user
    /// info is `502 origin_error` — the origin's fault, not the client's.
    @Test(arguments: ["http://[", "http:///nohost.jpg", "http://user:pw@h.example/a.jpg", "", "http://h .example/"])
    func anUnusableLocationIsAnOriginError(_ location: String) throws {
        let base = try SourceURL("http://h.example/a.jpg")
        #expect {
            try base.resolve(location)
        } throws: { error in
            guard case .origin(let message) = error as? FetchError else { return false }
            return message.hasPrefix("redirect to an")
        }
    }
}
