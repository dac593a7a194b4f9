import Testing
@testable import ThumbAPI

/// `If-None-Match` against a rendition's strong ETag (RFC 9110 §13.1.2: weak
/// comparison), without a server.
@Suite struct IfNoneMatchTests {
    static let etag = "\"0123456789abcdef0123456789abcdef\""

    @Test(arguments: ["\"0123456789abcdef0123456789abcdef\"",
                      "*",
                      " * ",
                      "W/\"0123456789abcdef0123456789abcdef\"",
                      "\"other\", \"0123456789abcdef0123456789abcdef\"",
                      "\"other\",W/\"0123456789abcdef0123456789abcdef\"",
                      "  \"0123456789abcdef0123456789abcdef\"  ,\t\"other\"",
                      "\"a\", \"b\", *"])
    func matches(_ header: String) {
        #expect(ServiceHandler.matches(header, Self.etag))
    }

    @Test(arguments: ["",
                      "\"other\"",
                      "\"other\", W/\"another\"",
                      "0123456789abcdef0123456789abcdef",
                      "\"0123456789ABCDEF0123456789ABCDEF\"",
                      "w/\"0123456789abcdef0123456789abcdef\"",
                      "W/ \"0123456789abcdef0123456789abcdef\"",
                      "\"0123456789abcdef0123456789abcdef",
                      "**",
                      ","])
    func doesNotMatch(_ header: String) {
        #expect(!ServiceHandler.matches(header, Self.etag))
    }
}
