import Testing
@testable import ThumbHTTP

/// Strict percent-decoding of request targets (RFC 3986 §2.1), pure.
@Suite struct PercentDecodingTests {
    private func decode(_ text: String, plusAsSpace: Bool = false) -> String? {
        PercentDecoding.decode(Array(text.utf8)[...], plusAsSpace: plusAsSpace)
    }

    @Test func decodesEscapesInEitherCase() {
        #expect(decode("a%20b") == "a b")
        #expect(decode("%2f%2F%3a%3A") == "//::")
        #expect(decode("https%3A%2F%2Fex.com%2Fa.jpg%3Fx%3D1%26y%3D2") == "https://ex.com/a.jpg?x=1&y=2")
        #expect(decode("%41") == "A", "an escape may end the input")
        #expect(decode("%25") == "%", "a decoded % is not decoded again")
        #expect(decode("%2541") == "%41")
        #expect(decode("") == "")
        #expect(decode("plain-text_~.") == "plain-text_~.")
    }

    @Test func plusIsASpaceOnlyWhenAsked() {
        #expect(decode("a+b", plusAsSpace: true) == "a b")
        #expect(decode("a+b", plusAsSpace: false) == "a+b")
        #expect(decode("a%2Bb", plusAsSpace: true) == "a+b", "an escaped + stays a plus")
    }

    @Test(arguments: ["%", "%4", "a%", "a%2", "%G0", "%0G", "%zz", "%%41", "100%", "%-1", "% 1"])
    func aPercentWithoutTwoHexDigitsIsAnError(_ text: String) {
        #expect(decode(text) == nil)
    }

    @Test func decodedBytesMustBeUTF8() {
        #expect(decode("caf%C3%A9") == "café")
        #expect(decode("%E2%82%AC") == "€")
        #expect(decode("%F0%9F%90%88") == "🐈")
        #expect(decode("ü") == "ü", "raw UTF-8 passes through")
        #expect(decode("%C3") == nil, "a truncated sequence")
        #expect(decode("%FF") == nil)
        #expect(decode("%C0%AF") == nil, "an overlong encoding of /")
        #expect(decode("%ED%A0%80") == nil, "a UTF-16 surrogate")
        #expect(decode("%80abc") == nil, "a stray continuation byte")
    }

    @Test func aNULByteDecodesAsItself() {
        // Valid UTF-8; whoever uses the value decides whether NUL is acceptable.
        #expect(decode("a%00b") == "a\u{0}b")
    }

    @Test func decodesASliceThatDoesNotStartAtZero() {
        let bytes = Array("/path?q=%41%42".utf8)
        let query = bytes[bytes.firstIndex(of: UInt8(ascii: "?"))! + 1 ..< bytes.endIndex]
        #expect(PercentDecoding.decode(query, plusAsSpace: true) == "q=AB")
        let cut = bytes[0 ..< bytes.count - 1]   // ends in "%4": its escape is cut short
        #expect(PercentDecoding.decode(cut, plusAsSpace: false) == nil)
    }

    @Test func queriesSplitIntoDecodedPairs() throws {
        let pairs = try #require(PercentDecoding.query(Array("url=http%3A%2F%2Fh%2Fa+b.jpg&w=200&&flag&empty=&=v&a=1=2".utf8)[...]))
        #expect(pairs.map(\.name) == ["url", "w", "flag", "empty", "", "a"])
        #expect(pairs.map(\.value) == ["http://h/a b.jpg", "200", "", "", "v", "1=2"])
        #expect(PercentDecoding.query([][...])?.isEmpty == true)
        #expect(PercentDecoding.query(Array("a=1&b=%ZZ".utf8)[...]) == nil, "one bad escape refuses the query")
        #expect(PercentDecoding.query(Array("%FF=1".utf8)[...]) == nil)
    }

    /// The parser only validates a query (it is decoded when the handler asks):
    /// the check must accept exactly what decoding accepts. Seeded pieces that
    /// mix escapes, truncated and overlong sequences, surrogates and separators.
    @Test func queryCheckAgreesWithDecoding() {
        let pieces = ["a", "=", "&", "+", "%", "%4", "%41", "%C3", "%A9", "%E2%82", "%AC", "%F0%9F", "%90%88", "%C0%AF",
                      "%ED%A0%80", "%F4%90%80%80", "%EF%BF%BD", "%FF", "%zz", "%26", "%3D", "%2B", "%E0%A0%80", "%E0%80%80"]
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        var accepted = 0, refused = 0
        for _ in 0..<4000 {
            var text = ""
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            for k in 0..<Int(seed >> 61) + 1 {
                text += pieces[Int((seed >> UInt64(8 * k)) & 0xFF) % pieces.count]
            }
            let bytes = Array(text.utf8)[...]
            let decodes = PercentDecoding.query(bytes) != nil
            #expect(PercentDecoding.isValidQuery(bytes) == decodes, "\(text)")
            if decodes { accepted += 1 } else { refused += 1 }
        }
        #expect(accepted > 100 && refused > 100, "both outcomes exercised")
    }
}

