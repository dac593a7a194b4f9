import Testing
@testable import ThumbHTTP

/// RFC 9112 strictness of the request head (HTTPServer.md): what a
/// lenient parser would read around, and a proxy in front might read
/// differently, is refused.
@Suite struct RequestStrictnessTests {
    private func parse(_ text: String, chunk: Int? = nil) -> [RequestParser.Event] {
        parse(Array(text.utf8), chunk: chunk)
    }

    private func parse(_ bytes: [UInt8], chunk: Int? = nil) -> [RequestParser.Event] {
        var parser = RequestParser()
        var events: [RequestParser.Event] = []
        let step = chunk ?? max(1, bytes.count)
        var i = 0
        repeat {
            parser.append(bytes[i..<min(i + step, bytes.count)])
            i += step
            while let e = parser.next() { events.append(e) }
        } while i < bytes.count
        return events
    }

    private func status(_ text: String) -> Int? {
        let whole = parse(text), bytewise = parse(text, chunk: 1)
        let a = whole.first.map(Self.status), b = bytewise.first.map(Self.status)
        #expect(a == b, "split or not, the same answer")
        return a
    }

    private static func status(_ event: RequestParser.Event) -> Int {
        switch event {
        case .request: 200
        case .error(let e): e.status
        default: 0
        }
    }

    private func request(_ text: String) -> HTTPRequest? {
        if case .request(let r)? = parse(text).first { return r }
        return nil
    }

    @Test(arguments: [
        "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\rb\r\n\r\n",         // CR inside a value
        "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\r\r\n\r\n",          // CR CR LF
        "GET / HTTP/1.1\rHost: h\r\n\r\n",                       // CR ending the request line
        "\rGET / HTTP/1.1\r\nHost: h\r\n\r\n",                   // CR before the request line
        "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\u{0}b\r\n\r\n",      // NUL in a value
        "GET / HTTP/1.1\r\nHost: h\u{0}\r\n\r\n",                 // NUL in the Host value
        "GET / HTTP/1.1\r\nHost: h\r\nX-A\u{0}: b\r\n\r\n",       // NUL in a name
        "GET / HTTP/1.1\r\nHost: h\r\n\u{0}\r\n\r\n",             // NUL alone on a line
    ])
    func aBareCROrANulAnywhereInTheHeadIs400(_ text: String) {
        #expect(status(text) == 400)
    }

    @Test func crlfAndBareLFLineEndsAndLeadingEmptyLinesStillWork() {
        #expect(status("GET / HTTP/1.1\nHost: h\n\n") == 200)
        #expect(status("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n") == 200)
        #expect(request("GET / HTTP/1.1\r\nHost: h\r\nX-A: a b\t c\r\n\r\n")?.header("x-a") == "a b\t c")
    }

    @Test func http11NeedsExactlyOneValidHost() {
        #expect(status("GET / HTTP/1.1\r\n\r\n") == 400)
        #expect(status("GET / HTTP/1.1\r\nX-Host: h\r\n\r\n") == 400)
        #expect(status("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n") == 400, "two, even equal")
        #expect(status("GET / HTTP/1.1\r\nhost: a\r\nHOST: b\r\n\r\n") == 400)
        #expect(status("GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n") == 400, "two are refused in 1.0 too")
        for bad in ["a b", "a/b", "user@a", "a:8o", "[::1", "a:1:2", ":80"] {
            #expect(status("GET / HTTP/1.1\r\nHost: \(bad)\r\n\r\n") == 400, "Host: \(bad)")
        }
        for good in ["localhost", "127.0.0.1:8080", "[::1]:80", "[::1]", "thumbs.example.com", "x-y_z.~"] {
            #expect(status("GET / HTTP/1.1\r\nHost: \(good)\r\n\r\n") == 200, "Host: \(good)")
        }
        #expect(status("GET / HTTP/1.1\r\nHost:\r\n\r\n") == 200, "an empty Host is allowed (RFC 9112 §3.2)")
    }

    @Test func http10WithoutHostIsServed() {
        #expect(request("GET /a HTTP/1.0\r\n\r\n")?.path == "/a")
    }

    @Test func absoluteFormTargetsAreRoutedByTheirPathAndQuery() throws {
        let r = try #require(request("GET http://127.0.0.1:8080/thumbnail?url=x%2Fy&w=2 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"))
        #expect(r.path == "/thumbnail" && r.target == "/thumbnail?url=x%2Fy&w=2", "signatures cover the origin form")
        #expect(r.query.map(\.name) == ["url", "w"] && r.query.first?.value == "x/y")
        #expect(request("GET HTTPS://localhost HTTP/1.1\r\nHost: localhost\r\n\r\n")?.target == "/")
        #expect(request("GET http://localhost?w=1 HTTP/1.1\r\nHost: localhost\r\n\r\n")?.target == "/?w=1")
        #expect(request("GET http://[::1]:80/a HTTP/1.0\r\n\r\n")?.path == "/a")
        for bad in ["ftp://h/a", "http:///a", "http://u@h/a", "http:/h/a", "http://h#f", "*", "h:80"] {
            #expect(status("GET \(bad) HTTP/1.1\r\nHost: h\r\n\r\n") == 400, "target \(bad)")
        }
    }

    @Test func anExpectationOtherThan100ContinueIs417() throws {
        for value in ["foo", "100-continue, foo", "", "200-ok"] {
            let events = parse("POST /p HTTP/1.1\r\nHost: h\r\nExpect: \(value)\r\nContent-Length: 2\r\n\r\nab")
            guard case .error(let e)? = events.first else { Issue.record("Expect: \(value) was accepted"); continue }
            #expect(e.status == 417 && e.code == "expectation_failed", "Expect: \(value)")
        }
        #expect(status("GET / HTTP/1.0\r\nExpect: foo\r\n\r\n") == 417)
        #expect(status("GET / HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\n\r\n") == 200, "case-insensitive")
    }
}
