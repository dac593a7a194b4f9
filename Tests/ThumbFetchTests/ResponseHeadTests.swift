import Testing
@testable import ThumbFetch

/// The final head's fields as the fetcher reads them (`TransferOutcome.headers`):
/// on bytes, as libcurl delivered them.
@Suite struct ResponseHeadTests {
    private func fields(_ text: String) -> [String: String] {
        Array(text.utf8).withUnsafeBytes { TransferOutcome.headers($0) }
    }

    @Test func namesAreLowerCasedAndValuesTrimmed() {
        let head = "HTTP/1.1 200 OK\r\nETag: \"abc\"\r\nLast-Modified:\tWed, 21 Oct 2015 07:28:00 GMT \r\nContent-Length:419\r\n\r\n"
        #expect(fields(head) == ["etag": "\"abc\"", "last-modified": "Wed, 21 Oct 2015 07:28:00 GMT", "content-length": "419"])
    }

    @Test func theStatusLineAndLinesWithoutAColonAreNotFields() {
        #expect(fields("HTTP/1.1 301 Moved: here\r\nnonsense\r\nLocation: /a:b\r\n\r\n") == ["location": "/a:b"])
        #expect(fields("HTTP/1.1 200 OK\r\n").isEmpty)
        #expect(fields("").isEmpty)
    }

    @Test func theLastOfARepeatedFieldWinsInAnyCase() {
        #expect(fields("HTTP/1.1 200 OK\r\nETag: a\r\netag: b\r\nETAG: c\r\n\r\n") == ["etag": "c"])
    }

    @Test func bareLineFeedsEndLinesAsLibcurlReadsThem() {
        #expect(fields("HTTP/1.1 200 OK\nETag: a\nContent-Type: image/png\n\n") == ["etag": "a", "content-type": "image/png"])
    }

    @Test func anEmptyValueAndBytesThatAreNotUTF8AreKept() {
        let bytes: [UInt8] = Array("HTTP/1.1 200 OK\r\nX-Empty:\r\nX-Bin: ".utf8) + [0xFF, 0x41] + Array("\r\n\r\n".utf8)
        let parsed = bytes.withUnsafeBytes { TransferOutcome.headers($0) }
        #expect(parsed == ["x-empty": "", "x-bin": "\u{FFFD}A"])
    }
}
