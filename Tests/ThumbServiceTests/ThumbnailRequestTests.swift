import Testing
import ThumbImaging
import ThumbRender
@testable import ThumbService

@Suite struct ThumbnailRequestTests {
    private let url = "https://cdn.example/cat.jpg"

    private func parse(_ pairs: [(String, String)],
                       _ config: ServiceConfiguration = ServiceConfiguration()) throws(ServiceError) -> ThumbnailRequest {
        try ThumbnailRequest(query: pairs.map { (name: $0.0, value: $0.1) }, config: config)
    }

    @Test func defaultsAndExplicitValues() throws {
        let r = try parse([("url", url), ("w", "256")])
        #expect(r.sourceURL == url)
        #expect(r.variant == ThumbnailVariant(prepared: PreparedVariant(width: 256, height: nil, fit: .inside, enlarge: false),
                                              format: .auto, quality: 80))
        let full = try parse([("url", url), ("w", "10"), ("h", "20"), ("fit", "cover"), ("enlarge", "1"),
                              ("format", "png"), ("q", "50")])
        #expect(full.variant.prepared == PreparedVariant(width: 10, height: 20, fit: .cover, enlarge: true))
        #expect(full.variant.format == .png && full.variant.quality == 50)
    }

    @Test func theKeyIgnoresParameterOrderAndSpelling() throws {
        let a = try parse([("url", url), ("w", "100"), ("h", "50"), ("sig", "x")])
        let b = try parse([("h", "50"), ("fit", "inside"), ("url", url), ("w", "100"), ("enlarge", "0")])
        #expect(a == b && a.variant.canonicalKey == b.variant.canonicalKey)
        // PNG ignores quality, so q must not split its cache entries.
        let p1 = try parse([("url", url), ("w", "100"), ("format", "png"), ("q", "10")])
        let p2 = try parse([("url", url), ("w", "100"), ("format", "png"), ("q", "90")])
        #expect(p1.variant.canonicalKey == p2.variant.canonicalKey)
    }

    @Test func presetsFillWhatIsNotGiven() throws {
        var config = ServiceConfiguration()
        config.output.presets["card"] = .init(width: 128, height: 96, fit: .cover, format: .jpeg, quality: 70)
        let r = try parse([("url", url), ("preset", "card"), ("q", "90")], config)
        #expect(r.variant.prepared == PreparedVariant(width: 128, height: 96, fit: .cover, enlarge: false))
        #expect(r.variant.format == .jpeg && r.variant.quality == 90)
        #expect(throws: ServiceError.badRequest("unknown preset 'nope'")) { try parse([("url", url), ("preset", "nope")], config) }
    }

    @Test func allowedSizesRestrictBoxesButNotPresets() throws {
        var config = ServiceConfiguration()
        config.output.allowedSizes = [.init(width: 256, height: 256)]
        config.output.presets["tiny"] = .init(width: 32, height: 32)
        #expect(try parse([("url", url), ("w", "256"), ("h", "256")], config).variant.prepared.width == 256)
        #expect(try parse([("url", url), ("preset", "tiny")], config).variant.prepared.width == 32)
        #expect(throws: ServiceError.self) { try parse([("url", url), ("w", "255"), ("h", "256")], config) }
        #expect(throws: ServiceError.self) { try parse([("url", url), ("w", "256")], config) }
        #expect(throws: ServiceError.self) { try parse([("url", url), ("preset", "tiny"), ("w", "40")], config) }
    }

    @Test(arguments: [
        [("w", "10")],
        [("url", ""), ("w", "10")],
        [("url", "ftp://x/a.jpg"), ("w", "10")],
        [("url", "/local/a.jpg"), ("w", "10")],
        [("url", "https://cdn.example/" + String(repeating: "a", count: 2048)), ("w", "10")],
        [("url", "https://cdn.example/a.jpg")],
        [("url", "https://cdn.example/a.jpg"), ("w", "0")],
        [("url", "https://cdn.example/a.jpg"), ("w", "4097")],
        [("url", "https://cdn.example/a.jpg"), ("w", "+10")],
        [("url", "https://cdn.example/a.jpg"), ("w", "1e2")],
        [("url", "https://cdn.example/a.jpg"), ("w", " 10")],
        [("url", "https://cdn.example/a.jpg"), ("w", "10"), ("w", "11")],
        [("url", "https://cdn.example/a.jpg"), ("w", "10"), ("fit", "cover")],
        [("url", "https://cdn.example/a.jpg"), ("h", "10"), ("fit", "fill")],
        [("url", "https://cdn.example/a.jpg"), ("w", "10"), ("fit", "crop")],
        [("url", "https://cdn.example/a.jpg"), ("w", "10"), ("format", "gif")],
        [("url", "https://cdn.example/a.jpg"), ("w", "10"), ("q", "0")],
        [("url", "https://cdn.example/a.jpg"), ("w", "10"), ("q", "101")],
        [("url", "https://cdn.example/a.jpg"), ("w", "10"), ("enlarge", "true")],
        [("url", "https://cdn.example/a.jpg"), ("w", "10"), ("width", "10")],
    ])
    func badParametersAre400(_ pairs: [(String, String)]) {
        do {
            _ = try parse(pairs)
            Issue.record("accepted \(pairs)")
        } catch {
            guard case .badRequest = error else { Issue.record("\(pairs): \(error), not bad_request"); return }
        }
    }

    @Test func requestsOfTwoSpellingsShareOneSource() throws {
        let config = ServiceConfiguration()
        let a = try ThumbnailRequest(query: [("url", "HTTP://Cdn.Example:80/x/../a.jpg#f"), ("w", "10")], config: config)
        let b = try ThumbnailRequest(query: [("url", "http://cdn.example/a.jpg"), ("w", "10")], config: config)
        #expect(a == b && a.sourceURL == "http://cdn.example/a.jpg")
    }

    /// SourcesAndLimits.md § Hosts: a numeric host is the IPv4 address it
    /// means, so every spelling of 127.0.0.1 is one source, judged as loopback.
    @Test func numericHostsAreTheAddressTheyMean() throws {
        let config = ServiceConfiguration()
        for spelling in ["http://127.1/a.jpg", "http://2130706433/a.jpg", "http://0x7f.0.0.1/a.jpg", "http://0177.0.0.1/a.jpg"] {
            let r = try ThumbnailRequest(query: [("url", spelling), ("w", "10")], config: config)
            #expect(r.sourceURL == "http://127.0.0.1/a.jpg" && r.sourceHost == "127.0.0.1", "\(spelling)")
        }
    }

    /// A URL no fetch could use is a 400 when the request is read, before
    /// any cache or download: brackets around a name, a zone identifier, a
    /// number that is no address, credentials.
    @Test(arguments: ["http://[example]/a.jpg", "http://[localhost]:8080/a.jpg", "http://[::1%25lo]/a.jpg",
                      "http://[fe80::1%25eth0]:80/", "http://1.2.3.256/a.jpg", "http://example.1/a.jpg",
                      "http://user:pw@cdn.example/a.jpg", "http://cdn.example:99999/a.jpg"])
    func malformedSourceURLsAre400(_ url: String) {
        do {
            _ = try parse([("url", url), ("w", "10")])
            Issue.record("accepted \(url)")
        } catch {
            guard case .badRequest = error else { Issue.record("\(url): \(error), not bad_request"); return }
        }
    }
}
