import Testing
@testable import ThumbFetch

/// The SSRF rules as a pure function on literals: no test ever connects to these.
@Suite struct AddressClassifierTests {
    @Test(arguments: [
        ("127.0.0.1", AddressClass.loopback), ("127.255.0.9", .loopback), ("::1", .loopback),
        ("10.1.2.3", .private), ("172.16.0.1", .private), ("172.31.255.255", .private),
        ("192.168.1.1", .private), ("100.64.0.1", .private), ("100.127.255.254", .private),
        ("169.254.169.254", .linkLocal), ("169.254.0.1", .linkLocal), ("fe80::1", .linkLocal), ("febf::1", .linkLocal),
        ("224.0.0.1", .multicast), ("239.255.255.250", .multicast), ("ff02::1", .multicast),
        ("0.0.0.0", .unspecified), ("::", .unspecified), ("0.1.2.3", .reserved),
        ("fc00::1", .uniqueLocal), ("fd12:3456::1", .uniqueLocal),
        ("::ffff:127.0.0.1", .embeddedIPv4), ("::ffff:8.8.8.8", .embeddedIPv4), ("::127.0.0.1", .embeddedIPv4),
        ("64:ff9b::a00:1", .embeddedIPv4), ("2002:a00:1::", .embeddedIPv4), ("2001:0:4136:e378::1", .embeddedIPv4),
        ("255.255.255.255", .reserved), ("240.0.0.1", .reserved), ("198.18.0.1", .reserved),
        ("192.0.2.1", .reserved), ("2001:db8::1", .reserved), ("fec0::1", .reserved),
        ("8.8.8.8", .public), ("1.1.1.1", .public), ("172.32.0.1", .public), ("100.128.0.1", .public),
        ("172.15.255.255", .public), ("2606:4700::1111", .public), ("2a00:1450:4001::200e", .public),
    ])
    func classifies(_ literal: String, _ expected: AddressClass) throws {
        let address = try #require(IPAddress(literal))
        #expect(AddressClassifier.classify(address) == expected, "\(literal)")
        #expect(AddressClassifier.isPublic(address) == (expected == .public))
    }

    @Test func parsesAndPrintsLiterals() {
        #expect(IPAddress("[::1]")?.description == "::1")
        #expect(IPAddress("10.0.0.1")?.description == "10.0.0.1")
        #expect(IPAddress("example.com") == nil)
        #expect(IPAddress("1.2.3") == nil)
    }
}
