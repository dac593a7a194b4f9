import Testing
@testable import ThumbAPI
import ThumbImaging
import ThumbRender
@testable import ThumbService

/// The composition parameters where JSON carries them (API.md § Prefetch,
/// Configuration.md presets): the same values and rules as the query, in JSON
/// types — strings for `gravity`, `fp`, `bg`; numbers for `blur`, `sharpen`.
@Suite struct CompositionInputTests {
    private static let url = "https://cdn.example/a.jpg"

    private func batch(_ item: String, _ config: ServiceConfiguration = ServiceConfiguration()) throws(ServiceError) -> [ThumbnailRequest] {
        try PrefetchBatch(body: Array(#"{"items": [{"url": "\#(Self.url)", \#(item)}]}"#.utf8), config: config).items
    }

    private func query(_ pairs: [(String, String)], _ config: ServiceConfiguration = ServiceConfiguration()) throws -> ThumbnailRequest {
        try ThumbnailRequest(query: [(name: "url", value: Self.url)] + pairs.map { (name: $0.0, value: $0.1) }, config: config)
    }

    // MARK: prefetch items

    @Test func prefetchItemsAreTheRequestsTheQueryWouldMake() throws {
        let cases: [(String, [(String, String)])] = [
            (#""w": 100, "h": 80, "fit": "cover", "gravity": "northwest", "blur": 2.5, "sharpen": 1"#,
             [("w", "100"), ("h", "80"), ("fit", "cover"), ("gravity", "northwest"), ("blur", "2.5"), ("sharpen", "1")]),
            (#""w": 100, "h": 80, "fit": "cover", "fp": "0.25,1.0", "dpr": 2"#,
             [("w", "100"), ("h", "80"), ("fit", "cover"), ("fp", "0.25,1.0"), ("dpr", "2")]),
            (#""w": 100, "h": 80, "fit": "contain", "bg": "FFFFFF80", "format": "jpeg""#,
             [("w", "100"), ("h", "80"), ("fit", "contain"), ("bg", "FFFFFF80"), ("format", "jpeg")]),
            // JSON numbers are values: 2.50, 25e-1 and 2.5 are one number; 1e2 is 100.
            (#""w": 100, "blur": 2.50, "sharpen": 10.0"#, [("w", "100"), ("blur", "2.5"), ("sharpen", "10")]),
            (#""w": 100, "blur": 25e-1"#, [("w", "100"), ("blur", "2.5")]),
            (#""w": 100, "blur": 1e2"#, [("w", "100"), ("blur", "100")]),
            (#""w": 100, "blur": 0.3, "sharpen": 0.3"#, [("w", "100"), ("blur", "0.3"), ("sharpen", "0.3")]),
        ]
        for (item, pairs) in cases {
            let items = try batch(item)
            let expected = try query(pairs)
            #expect(items == [expected] && items.first?.variant.canonicalKey == expected.variant.canonicalKey, "\(item)")
        }
        let blurred = try batch(#""w": 100, "blur": 2.5, "dpr": 2"#)
        #expect(blurred.first?.variant.prepared.blurTenths == 50)
    }

    @Test(arguments: [
        // Wrong JSON types.
        #""w": 100, "h": 80, "fit": "cover", "gravity": 1"#, #""w": 100, "h": 80, "fit": "cover", "gravity": null"#,
        #""w": 100, "h": 80, "fit": "cover", "fp": [0.5, 0.5]"#, #""w": 100, "h": 80, "fit": "cover", "fp": 0.5"#,
        #""w": 100, "h": 80, "fit": "cover", "fp": {"x": 0.5, "y": 0.5}"#,
        #""w": 100, "bg": 16777215"#, #""w": 100, "bg": ["ff0000"]"#,
        #""w": 100, "blur": "2""#, #""w": 100, "blur": true"#, #""w": 100, "blur": null"#, #""w": 100, "blur": [2]"#,
        #""w": 100, "sharpen": "1.5""#,
        // The query's ranges and digits.
        #""w": 100, "blur": 2.55"#, #""w": 100, "blur": 0.2"#, #""w": 100, "blur": 100.1"#, #""w": 100, "blur": 101"#,
        #""w": 100, "blur": -1"#, #""w": 100, "blur": -0.5"#, #""w": 100, "blur": 0"#, #""w": 100, "blur": 1e300"#,
        #""w": 100, "blur": 0.30000001"#, #""w": 100, "blur": 99999999999999999999"#,
        #""w": 100, "sharpen": 11"#, #""w": 100, "sharpen": 10.01"#, #""w": 100, "sharpen": 0.25"#,
        // The query's strings and combinations.
        #""w": 100, "h": 80, "fit": "cover", "gravity": "CENTER""#, #""w": 100, "h": 80, "fit": "cover", "fp": "0.5""#,
        #""w": 100, "h": 80, "fit": "cover", "fp": "1.001,0""#, ##""w": 100, "bg": "#ffffff""##, #""w": 100, "bg": "zzzzzz""#,
        #""w": 100, "h": 80, "fit": "cover", "fp": "0.5,0.5", "gravity": "north""#,
        #""w": 100, "h": 80, "fp": "0.5,0.5""#, #""w": 100, "fit": "contain""#,
    ])
    func badItemsAre400(_ item: String) {
        do {
            _ = try batch(item)
            Issue.record("accepted \(item)")
        } catch {
            guard case .badRequest(let message) = error else { Issue.record("\(item): \(error)"); return }
            #expect(message.hasPrefix("prefetch item 0: "), "\(message)")
            // The message names the field at fault.
            let named = ["gravity", "fp", "bg", "blur", "sharpen", "fit"].filter { item.contains("\"\($0)\"") }
            #expect(named.contains { message.contains($0) }, "\(message)")
        }
    }

    // MARK: presets in the config file

    private func presets(_ text: String) throws(ConfigurationError) -> [String: ServiceConfiguration.Preset] {
        try DaemonConfiguration.parse(Array(#"{"output": {"presets": \#(text)}}"#.utf8)).service.output.presets
    }

    @Test func presetsTakeCompositionFieldsAndCheckConfigPrintsThemBack() throws {
        let c = try DaemonConfiguration.parse(Array("""
            {"output": {"presets": {
                "hero": {"w": 640, "h": 360, "fit": "cover", "format": "jpeg", "gravity": "attention",
                         "bg": "FFAA00", "blur": 2.5, "sharpen": 1},
                "pad": {"w": 64, "h": 64, "fit": "contain", "bg": "00000080", "blur": 100, "sharpen": 10.0},
                "soft": {"w": 64, "blur": 0.3, "sharpen": 0.3}}}}
            """.utf8))
        let p = c.service.output.presets
        #expect(p["hero"] == .init(width: 640, height: 360, fit: .cover, format: .jpeg, gravity: .attention,
                                   background: RGBAColor(r: 255, g: 170, b: 0), blurTenths: 25, sharpenTenths: 10))
        #expect(p["pad"] == .init(width: 64, height: 64, fit: .contain, background: RGBAColor(r: 0, g: 0, b: 0, a: 128),
                                  blurTenths: 1000, sharpenTenths: 100))
        #expect(p["soft"] == .init(width: 64, blurTenths: 3, sharpenTenths: 3))
        // check-config prints them in the file's shape, and that reads back to the same values.
        let printed = c.json.serialized(indent: 2)
        #expect(printed.contains(#""gravity": "attention""#) && printed.contains(#""bg": "ffaa00""#))
        #expect(printed.contains(#""blur": 2.5"#) && printed.contains(#""sharpen": 1"#) && printed.contains(#""blur": 0.3"#))
        #expect(printed.contains(#""bg": "00000080""#) && printed.contains(#""blur": 100"#))
        var roundTrip = try DaemonConfiguration.parse(Array(printed.utf8))
        roundTrip.security = c.security
        #expect(roundTrip == c)
        // And a request with the preset gets them.
        let r = try ThumbnailRequest(query: [("url", Self.url), ("preset", "hero"), ("dpr", "2")], config: c.service)
        #expect(r.variant.prepared == PreparedVariant(width: 1280, height: 720, fit: .cover, gravity: .attention,
                                                      blurTenths: 50, sharpenTenths: 20))
        #expect(r.variant.background == RGBAColor(r: 255, g: 170, b: 0))
    }

    @Test(arguments: [
        (#"{"p": {"gravity": "CENTER"}}"#, "gravity"), (#"{"p": {"gravity": 1}}"#, "gravity"),
        (#"{"p": {"gravity": "middle"}}"#, "gravity"),
        (##"{"p": {"bg": "#ffffff"}}"##, "bg"), (#"{"p": {"bg": "zzzzzz"}}"#, "bg"), (#"{"p": {"bg": 255}}"#, "bg"),
        (#"{"p": {"blur": 0.2}}"#, "blur"), (#"{"p": {"blur": 100.1}}"#, "blur"), (#"{"p": {"blur": 2.55}}"#, "blur"),
        (#"{"p": {"blur": "2"}}"#, "blur"), (#"{"p": {"blur": -1}}"#, "blur"), (#"{"p": {"blur": 0}}"#, "blur"),
        (#"{"p": {"blur": 99999999999999999999}}"#, "blur"), (#"{"p": {"blur": null}}"#, "blur"),
        (#"{"p": {"sharpen": 11}}"#, "sharpen"), (#"{"p": {"sharpen": 0.25}}"#, "sharpen"),
        (#"{"p": {"sharpen": true}}"#, "sharpen"),
        (#"{"p": {"fp": "0.5,0.5"}}"#, "fp"), (#"{"p": {"fit": "pad"}}"#, "fit"),
    ])
    func badPresetFieldsNameTheirKey(_ text: String, _ field: String) {
        do {
            _ = try presets(text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.key == "output.presets.p.\(field)", "\(error)")
        }
    }
}
