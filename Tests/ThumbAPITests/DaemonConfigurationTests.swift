import ThumbFetch
import Foundation
import Testing
@testable import ThumbAPI
@testable import ThumbService

@Suite struct DaemonConfigurationTests {
    private func parse(_ text: String) throws(ConfigurationError) -> DaemonConfiguration {
        try DaemonConfiguration.parse(Array(text.utf8))
    }

    @Test func emptyObjectGivesSpecDefaults() throws {
        let c = try parse("{}")
        #expect(c == DaemonConfiguration())
        #expect(c.listen == "127.0.0.1:8080" && c.service.workers == 0 && c.service.maxQueue == 256)
        #expect(c.service.memoryCacheBytes == 268_435_456 && c.service.diskStore.maxBytes == 4_294_967_296)
        #expect(c.service.limits.maxDecodeMemoryBytes == 536_870_912 && c.service.origin.maxRedirects == 3)
        #expect(c.http.maxHeaderBytes == 16_384 && c.service.output.defaultQuality == 80 && c.log.level == .info)
    }

    @Test func everyKeyIsRead() throws {
        let c = try parse("""
            {"listen": "[::1]:9000", "workers": 3, "maxQueue": 10, "memoryCacheBytes": 0,
             "diskStore": {"path": "/tmp/x", "maxBytes": 1000, "ttlSeconds": 5},
             "limits": {"maxSourceBytes": 10, "maxSourcePixels": 20, "maxOutputDimension": 30, "maxDecodeMemoryBytes": 40},
             "origin": {"timeoutSeconds": 1.5, "connectTimeoutSeconds": 1, "maxRedirects": 0,
                        "allowedHosts": ["a.example", "*.cdn.example"], "allowPrivateNetworks": true, "negativeCacheSeconds": 0},
             "http": {"maxConnections": 5, "maxHeaderBytes": 2048, "requestTimeoutSeconds": 2, "idleTimeoutSeconds": 3},
             "output": {"defaultQuality": 70, "cacheMaxAgeSeconds": 60, "allowedSizes": ["256x256", "64x32"],
                        "presets": {"small": {"w": 128, "h": 128, "fit": "cover", "format": "jpeg", "q": 80}, "bare": {}}},
             "security": {"signingKey": "k", "adminToken": null},
             "log": {"level": "debug", "accessLog": false}}
            """)
        #expect(c.listen == "[::1]:9000" && c.service.workers == 3 && c.service.memoryCacheBytes == 0)
        #expect(c.service.diskStore.path == "/tmp/x" && c.service.diskStore.ttlSeconds == 5)
        #expect(c.service.limits.maxDecodeMemoryBytes == 40 && c.service.origin.timeoutSeconds == 1.5)
        #expect(c.service.origin.allowedHosts == ["a.example", "*.cdn.example"] && c.service.origin.allowPrivateNetworks)
        #expect(c.http.requestTimeoutSeconds == 2 && c.service.output.allowedSizes.map(\.description) == ["256x256", "64x32"])
        #expect(c.service.output.presets["small"] == .init(width: 128, height: 128, fit: .cover, format: .jpeg, quality: 80))
        #expect(c.service.output.presets["bare"] == .init())
        #expect(c.security.signingKey == "k" && c.security.adminToken == nil && c.log.level == .debug && !c.log.accessLog)
        // The printed effective config reads back to the same values (secrets masked).
        var roundTrip = try DaemonConfiguration.parse(Array(c.json.serialized(indent: 2).utf8))
        roundTrip.security = c.security
        #expect(roundTrip == c)
    }

    @Test(arguments: [
        (#"{"bogus": 1}"#, "bogus"),
        (#"{"limits": {"maxSourceBytes": 1, "maxPixels": 2}}"#, "limits.maxPixels"),
        (#"{"workers": -1}"#, "workers"),
        (#"{"workers": 1.5}"#, "workers"),
        (#"{"maxQueue": "10"}"#, "maxQueue"),
        (#"{"listen": "localhost"}"#, "listen"),
        (#"{"listen": "127.0.0.1:99999"}"#, "listen"),
        (#"{"diskStore": {"path": 3}}"#, "diskStore.path"),
        (#"{"origin": {"allowPrivateNetworks": 1}}"#, "origin.allowPrivateNetworks"),
        (#"{"origin": {"allowedHosts": ["*."]}}"#, "origin.allowedHosts"),
        (#"{"origin": {"timeoutSeconds": 0}}"#, "origin.timeoutSeconds"),
        (#"{"output": {"allowedSizes": ["256"]}}"#, "output.allowedSizes"),
        (#"{"output": {"allowedSizes": ["0x10"]}}"#, "output.allowedSizes"),
        (#"{"output": {"defaultQuality": 101}}"#, "output.defaultQuality"),
        (#"{"output": {"presets": {"p": {"fit": "stretch"}}}}"#, "output.presets.p.fit"),
        (#"{"output": {"presets": {"p": {"width": 3}}}}"#, "output.presets.p.width"),
        (#"{"security": {"adminToken": ""}}"#, "security.adminToken"),
        (#"{"log": {"level": "verbose"}}"#, "log.level"),
        (#"{"http": []}"#, "http"),
        (#"[]"#, ""),
        (#"{"a": "#, ""),
    ])
    func badValuesNameTheirKey(_ text: String, _ key: String) {
        #expect(throws: ConfigurationError.self) { try parse(text) }
        do {
            _ = try parse(text)
        } catch {
            #expect(error.key == key, "\(error)")
        }
    }

    @Test func hostPatterns() {
        let patterns = ["img.example.com", "*.cdn.example"]
        #expect(HostPattern.allows("IMG.example.com.", patterns: patterns))
        #expect(HostPattern.allows("a.cdn.example", patterns: patterns))
        #expect(HostPattern.allows("a.b.cdn.example", patterns: patterns))
        #expect(!HostPattern.allows("cdn.example", patterns: patterns), "the bare domain is not a subdomain")
        #expect(!HostPattern.allows("evilcdn.example", patterns: patterns))
        #expect(!HostPattern.allows("img.example.com.evil", patterns: patterns))
        #expect(HostPattern.allows("anything", patterns: []))
    }
}

@Suite struct ShippedConfigurationTests {
    /// Config/thumbd.json documents the defaults; it must say exactly what the code does.
    @Test func theShippedFileIsTheBuiltInDefaults() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Config/thumbd.json").standardized.path
        #expect(try DaemonConfiguration.load(path: path) == DaemonConfiguration())
    }

    /// Config/thumbd.production.json is what the README tells operators to start from.
    @Test func theProductionExampleLoadsAndLocksThingsDown() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Config/thumbd.production.json").standardized.path
        let c = try DaemonConfiguration.load(path: path)
        #expect(c.security.signingKey != nil && c.security.adminToken != nil)
        #expect(!c.service.origin.allowedHosts.isEmpty && !c.service.origin.allowPrivateNetworks && !c.service.output.allowedSizes.isEmpty)
        #expect(c.service.output.presets["avatar"]?.width == 128)
        #expect(c.service.output.presets["avatar"]?.gravity == .attention)
        #expect(c.service.output.presets["product"]?.fit == .contain && c.service.output.presets["product"]?.sharpenTenths == 5)
        #expect(c.service.output.presets["spoiler"]?.blurTenths == 120)
    }
}
