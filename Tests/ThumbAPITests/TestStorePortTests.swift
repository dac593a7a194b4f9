import Glibc
import Testing
import ThumbTestSupport

/// The ports the tests' own servers are started on (`Loopback.freePorts`), and
/// a SeaweedFS whose port was taken before it could bind it. A CI run lost its
/// S3 suite that way: SeaweedFS binds its S3 port 3–9 s after it starts, and
/// an ephemeral port picked for it had meanwhile become the source port of one
/// of the churn suites' thousands of connections a second.
@Suite struct TestStorePortTests {
    @Test func freePortsAreDistinctBindableAndBelowTheEphemeralRange() throws {
        let low = Loopback.ephemeralRangeStart()
        try #require(low > 11_000, "this host's ephemeral range starts at \(low): nothing below it to pick")
        let ports = Loopback.freePorts(64)
        #expect(Set(ports).count == 64)
        #expect(ports.allSatisfy { Int($0) >= 10_000 && Int($0) < low }, "\(ports)")
        // Never the same port twice in one process, even across calls.
        #expect(Set(Loopback.freePorts(64)).isDisjoint(with: ports))
        for port in ports.prefix(8) {
            let listener = try #require(Self.listen(port), "\(port) could not be bound")
            close(listener)
        }
    }

    /// A first start whose S3 port is held by someone else exits at once
    /// ("bind: address already in use"); the store starts again on new ports
    /// and answers.
    @Test func aStoreWhosePortWasTakenStartsAgainOnOthers() throws {
        let ports = Loopback.freePorts(8)
        let squatter = try #require(Self.listen(ports[6]))
        defer { close(squatter) }
        let store = try SeaweedS3(firstPorts: ports)
        defer { store.stop() }
        #expect(store.startsTaken == 2)
        #expect(store.port != ports[6])
        try store.createBucket("after-a-taken-port")
        try store.put(Array("x".utf8), bucket: "after-a-taken-port", encodedKey: "k")
        #expect(store.request("GET", "/after-a-taken-port/k").body == "x")
    }

    private static func listen(_ port: UInt16) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var a = Loopback.address(port: port)
        let bound = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, 4) == 0 else { close(fd); return nil }
        return fd
    }
}
