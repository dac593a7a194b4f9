import Testing
@testable import ThumbFetch

/// Hosts read as a browser reads them (SourcesAndLimits.md § Hosts), as a pure
/// function on literals: nothing here is looked up or connected to.
@Suite struct SourceHostTests {
    private func host(_ text: String) throws -> SourceHost { try SourceHost(parsing: Substring(text)) }

    /// Every spelling resolvers take for 127.0.0.1 is 127.0.0.1, so the
    /// address rule judges it as loopback.
    @Test(arguments: ["127.0.0.1", "127.1", "127.0.1", "2130706433", "0x7f000001", "0x7f.0.0.1", "0X7F.1",
                      "0177.0.0.1", "0177.1", "017700000001", "127.0.0.1.", "%31%32%37.1", "127.000.000.001"])
    func loopbackSpellingsAreLoopback(_ spelling: String) throws {
        let parsed = try host(spelling)
        #expect(parsed == .address(.v4(0x7F00_0001)), "\(spelling)")
        #expect(parsed.text == "127.0.0.1" && parsed.urlForm == "127.0.0.1")
        guard case .address(let address) = parsed else { return }
        #expect(AddressClassifier.classify(address) == .loopback)
    }

    @Test(arguments: [("10.1", "10.0.0.1", AddressClass.private), ("0xa9fea9fe", "169.254.169.254", .linkLocal),
                      ("0", "0.0.0.0", .unspecified), ("0x", "0.0.0.0", .unspecified),
                      ("4294967295", "255.255.255.255", .reserved), ("8.8.2056", "8.8.8.8", .public),
                      ("1.0x2.3", "1.2.0.3", .public), ("1.2.3.0x", "1.2.3.0", .public)])
    func otherNumericHostsAreTheAddressTheyMean(_ spelling: String, _ canonical: String, _ expected: AddressClass) throws {
        let parsed = try host(spelling)
        #expect(parsed.text == canonical, "\(spelling)")
        guard case .address(let address) = parsed else { Issue.record("\(spelling) is no address"); return }
        #expect(AddressClassifier.classify(address) == expected)
    }

    /// A host whose last label is a number must be an IPv4 address: anything
    /// else is malformed (400), not a name to look up.
    @Test(arguments: ["1.2.3.256", "256.1", "1.2.3.4.5", "4294967296", "08.0.0.1", "0x1.0x100.0.0", "example.1",
                      "1..2", "99999999999999999999999"])
    func aNumberThatIsNoIPv4AddressIsMalformed(_ spelling: String) {
        #expect(throws: FetchError.self, "\(spelling)") { try host(spelling) }
    }

    @Test func namesStayNamesLowerCased() throws {
        #expect(try host("Images.Example.COM") == .name("images.example.com"))
        #expect(try host("1.2.3.example") == .name("1.2.3.example"), "a number inside, not last")
        #expect(try host("0x1g") == .name("0x1g"), "not a number: a name")
        #expect(try host("xn--bcher-kva.example") == .name("xn--bcher-kva.example"))
    }

    @Test func ipv6LiteralsAreCanonical() throws {
        #expect(try host("[::1]") == .address(.v6(Array(repeating: 0, count: 15) + [1])))
        #expect(try host("[0:0:0:0:0:0:0:1]").urlForm == "[::1]")
        #expect(try host("[2001:DB8::1]").text == "2001:db8::1")
        #expect(try host("[::ffff:127.0.0.1]").text == "::ffff:127.0.0.1")
    }

    /// A zone identifier names an interface of this machine: never a source (400).
    @Test(arguments: ["[::1%25lo]", "[fe80::1%25eth0]", "[::1%lo]"])
    func zoneIdentifiersAreMalformed(_ spelling: String) {
        #expect(throws: FetchError.badURL("url host: an IPv6 zone identifier names an interface of this machine, not a source")) {
            try host(spelling)
        }
    }

    /// Brackets hold an IPv6 address and nothing else.
    @Test(arguments: ["[example]", "[localhost]", "[127.0.0.1]", "[]", "[::1"])
    func bracketsAroundAnythingButIPv6AreMalformed(_ spelling: String) {
        #expect(throws: FetchError.self, "\(spelling)") { try host(spelling) }
    }

    @Test(arguments: ["exa[mple", "a]b", "h|x", "a%", "a%2", "h^x", "a%5Bb"])
    func forbiddenCharactersAreMalformed(_ spelling: String) {
        #expect(throws: FetchError.self, "\(spelling)") { try host(spelling) }
    }

    /// The URL forms the fetcher and the normalization build on it.
    @Test func sourceURLsAndNormalizationUseTheAddressMeant() throws {
        #expect(try SourceURL("http://2130706433:8080/a.jpg").host == "127.0.0.1")
        #expect(try SourceURL("http://0x7f.1/").curlURL == "http://127.0.0.1:80/")
        #expect(try SourceURL("http://[0::1]:81/").hostHeader == "[::1]:81")
        #expect(URLNormalization.normalize("http://127.1:8080/a.jpg") == "http://127.0.0.1:8080/a.jpg")
        #expect(URLNormalization.normalize("HTTP://0177.0.0.1/") == "http://127.0.0.1/")
        #expect(URLNormalization.normalize("http://[0:0::1]:80/x") == "http://[::1]/x")
        #expect(URLNormalization.normalize("http://[example]/x") == "http://[example]/x", "left for SourceURL to refuse")
        for bad in ["http://[example]/", "http://[::1%25lo]/", "http://1.2.3.999/", "http://[localhost]:80/"] {
            #expect(throws: FetchError.self, "\(bad)") { try SourceURL(bad) }
        }
    }
}
