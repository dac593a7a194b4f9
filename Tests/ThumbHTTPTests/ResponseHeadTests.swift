import Testing
import ThumbTestSupport
@testable import ThumbHTTP

@Suite struct ResponseHeadTests {
    private func lines(_ response: HTTPResponse, keepAlive: Bool) -> [String] {
        String(decoding: ResponseHead.bytes(of: response, keepAlive: keepAlive), as: UTF8.self)
            .components(separatedBy: "\r\n")
    }

    @Test func statusLineServerFieldsThenTheResponseOwnAndABlankLine() throws {
        let response = HTTPResponse(status: 200, headers: [("Content-Type", "image/jpeg"), ("X-Cache", "memory")],
                                    body: [UInt8](repeating: 1, count: 1_234_567))
        let l = lines(response, keepAlive: true)
        #expect(l[0] == "HTTP/1.1 200 OK")
        let date = try #require(l[1].split(separator: " ", maxSplits: 1).last)
        #expect(l[1].hasPrefix("Date: ") && date.hasSuffix(" GMT") && date.count == 29, "IMF-fixdate: \(l[1])")
        #expect(Array(l[2...]) == ["Server: thumbd", "Content-Length: 1234567", "Connection: keep-alive",
                                   "Content-Type: image/jpeg", "X-Cache: memory", "", ""])
        #expect(ResponseHead.body(of: response).count == 1_234_567)
    }

    @Test func closeZeroLengthAndAnUnlistedStatus() {
        let l = lines(HTTPResponse(status: 299), keepAlive: false)
        #expect(l[0] == "HTTP/1.1 299 Status 299" && l[3] == "Content-Length: 0" && l[4] == "Connection: close")
    }

    @Test func a304CarriesNoLengthAndNoBody() {
        let response = HTTPResponse(status: 304, headers: [("ETag", "\"x\"")], body: Array("ignored".utf8))
        let l = lines(response, keepAlive: true)
        #expect(!l.contains { $0.hasPrefix("Content-Length") } && l.contains("ETag: \"x\""))
        #expect(ResponseHead.body(of: response).isEmpty)
    }

    @Test func headKeepsTheLengthOfTheBodyItDoesNotSend() {
        var response = HTTPResponse(status: 200, body: Array("0123456789".utf8))
        response.omitBody = true
        #expect(lines(response, keepAlive: true).contains("Content-Length: 10"))
        #expect(ResponseHead.body(of: response).isEmpty)
    }

    /// The `Date` header comes from the server's wall clock, formatted once
    /// per second (RFC 9110's own example date).
    @Test func theDateComesFromTheWallClock() {
        let calendar = ManualWallClock(secondsSince1970: 784_111_777)
        let date = HTTPDate(clock: calendar)
        #expect(date.now() == "Sun, 06 Nov 1994 08:49:37 GMT")
        calendar.advance(by: .milliseconds(999))
        #expect(date.now() == "Sun, 06 Nov 1994 08:49:37 GMT")
        calendar.advance(by: .milliseconds(1))
        #expect(date.now() == "Sun, 06 Nov 1994 08:49:38 GMT")
        calendar.set(secondsSince1970: 0)
        let head = String(decoding: ResponseHead.bytes(of: HTTPResponse(status: 204), keepAlive: true, date: date), as: UTF8.self)
        #expect(head.contains("\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\n"), "a clock stepped back is followed")
    }
}
