import Foundation
import Testing
@testable import ThumbFetch
@testable import ThumbAPI
@testable import ThumbService

/// `origin.caFile` and `origin.maxConcurrentFetches` (Configuration.md): defaults,
/// validation naming the key, round trip, and what reaches the fetcher.
@Suite struct FetcherConfigurationTests {
    private func parse(_ text: String) throws(ConfigurationError) -> DaemonConfiguration {
        try DaemonConfiguration.parse(Array(text.utf8))
    }

    @Test func defaultsAreTheSystemStoreAnd64Transfers() throws {
        let c = try parse("{}")
        #expect(c.service.origin.caFile == nil && c.service.origin.maxConcurrentFetches == 64)
        let p = FetchPolicy(configuration: c.service)
        #expect(p.caFile == nil && p.maxConcurrentFetches == 64)
        let shipped = try DaemonConfiguration.load(path: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Config/thumbd.json").standardized.path)
        #expect(shipped.service.origin == c.service.origin)
    }

    @Test func aReadableCaFileAndALimitInRangeAreTaken() throws {
        let file = NSTemporaryDirectory() + "thumbd-ca-\(UUID().uuidString).pem"
        FileManager.default.createFile(atPath: file, contents: Data("-----BEGIN CERTIFICATE-----\n".utf8))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let c = try parse(#"{"origin": {"caFile": "\#(file)", "maxConcurrentFetches": 1024}}"#)
        #expect(c.service.origin.caFile == file && c.service.origin.maxConcurrentFetches == 1024)
        #expect(FetchPolicy(configuration: c.service).caFile == file)
        let again = try DaemonConfiguration.parse(Array(c.json.serialized(indent: 2).utf8))
        #expect(again.service.origin == c.service.origin)
        #expect(try parse(#"{"origin": {"caFile": null}}"#).service.origin.caFile == nil)
    }

    @Test(arguments: [
        (#"{"origin": {"caFile": "/nonexistent/ca.pem"}}"#, "origin.caFile"),
        (#"{"origin": {"caFile": "/tmp"}}"#, "origin.caFile"),
        (#"{"origin": {"caFile": 3}}"#, "origin.caFile"),
        (#"{"origin": {"maxConcurrentFetches": 0}}"#, "origin.maxConcurrentFetches"),
        (#"{"origin": {"maxConcurrentFetches": 1025}}"#, "origin.maxConcurrentFetches"),
        (#"{"origin": {"maxConcurrentFetches": 2.5}}"#, "origin.maxConcurrentFetches"),
    ])
    func badValuesNameTheirKey(_ text: String, _ key: String) {
        do {
            _ = try parse(text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.key == key, "\(error)")
        }
    }
}
