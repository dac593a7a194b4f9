import Testing
@testable import ThumbJSON

@Suite struct JSONParserTests {
    @Test func parsesEveryKindAndKeepsIntegersApart() throws {
        let v = try JSONParser.parse(#"{"a": 1, "b": 1.5, "c": true, "d": null, "e": ["x", -2e3], "f": "\u00e9\ud83d\ude00\n"}"#)
        #expect(v == .object([("a", .integer(1)), ("b", .number(1.5)), ("c", .bool(true)), ("d", .null),
                              ("e", .array([.string("x"), .number(-2000)])), ("f", .string("é😀\n"))]))
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\":1,}", "01", "1.", "-", "tru", "\"abc", "{\"a\":1,\"a\":2}",
                      "[1] x", "\"\\q\"", "\"\\ud800\"", "NaN", "{a:1}", "\"\u{01}\""])
    func rejectsMalformedText(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSONParser.parse(text) }
    }

    @Test func nestingIsBounded() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(deep) }
    }

    @Test func serializationRoundTrips() throws {
        let v: JSONValue = .object([("s", .string("q\"\\\u{02}")), ("n", .number(12.5)), ("i", .integer(-3)),
                                    ("a", .array([])), ("o", .object([])), ("b", .bool(false))])
        #expect(try JSONParser.parse(v.serialized()) == v)
        #expect(try JSONParser.parse(v.serialized(indent: 2)) == v)
        #expect(JSONValue.object([("a", .integer(1))]).serialized() == #"{"a":1}"#)
    }
}
