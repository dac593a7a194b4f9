import Testing
import ThumbImaging
import ThumbRender
@testable import ThumbService

/// API.md § Composition: how `gravity`, `fp`, `bg`, `blur`, `sharpen` and
/// `fit=contain` are read from the query, joined with a preset, and keyed.
@Suite struct CompositionRequestTests {
    private static let url = "https://cdn.example/cat.jpg"

    private func parse(_ pairs: [(String, String)], _ config: ServiceConfiguration = ServiceConfiguration(),
                       accept: String? = nil) throws(ServiceError) -> ThumbnailRequest {
        try ThumbnailRequest(query: [(name: "url", value: Self.url)] + pairs.map { (name: $0.0, value: $0.1) },
                             config: config, accept: accept)
    }

    private func prepared(_ pairs: [(String, String)]) throws -> PreparedVariant { try parse(pairs).variant.prepared }

    private func key(_ pairs: [(String, String)], _ config: ServiceConfiguration = ServiceConfiguration(),
                     accept: String? = nil) throws -> String {
        try parse(pairs, config, accept: accept).variant.canonicalKey
    }

    private let cover = [("w", "100"), ("h", "80"), ("fit", "cover")]
    private let contain = [("w", "100"), ("h", "80"), ("fit", "contain")]

    // MARK: accepted spellings, exact values

    @Test func everyGravityIsReadWithCoverAndContain() throws {
        for gravity in Gravity.allCases {
            #expect(try prepared(cover + [("gravity", gravity.rawValue)]).gravity == gravity)
            #expect(try prepared(contain + [("gravity", gravity.rawValue)]).gravity == gravity)
        }
    }

    @Test(arguments: [
        ("0,1", 0, 1000), ("1,0", 1000, 0), ("0.5,0.25", 500, 250), ("0.123,0.999", 123, 999),
        ("0.05,0.005", 50, 5), ("1.0,1.00", 1000, 1000), ("1.000,0.0", 1000, 0), ("0.000,0.10", 0, 100),
    ])
    func focalPointsAreExactThousandths(_ text: String, _ x: Int, _ y: Int) throws {
        #expect(try prepared(cover + [("fp", text)]).focalPoint == FocalPoint(x: x, y: y))
    }

    @Test func backgroundsAreHexOfEitherCase() throws {
        let opaque = try parse(contain + [("bg", "FFaa00"), ("format", "jpeg")]).variant
        #expect(opaque.prepared.background == RGBAColor(r: 255, g: 170, b: 0, a: 255))
        #expect(opaque.background == RGBAColor(r: 255, g: 170, b: 0, a: 255), "JPEG flattens onto it too")
        let translucent = try prepared(contain + [("bg", "11223344")])
        #expect(translucent.background == RGBAColor(r: 0x11, g: 0x22, b: 0x33, a: 0x44))
    }

    @Test(arguments: [("0.3", 3), ("1", 10), ("2.0", 20), ("2.5", 25), ("10", 100), ("99.9", 999), ("100", 1000),
                      ("100.0", 1000), ("0.9", 9)])
    func blurIsReadInTenths(_ text: String, _ tenths: Int) throws {
        #expect(try prepared([("w", "100"), ("blur", text)]).blurTenths == tenths)
    }

    @Test(arguments: [("0.3", 3), ("1.5", 15), ("10", 100), ("10.0", 100), ("7", 70)])
    func sharpenIsReadInTenths(_ text: String, _ tenths: Int) throws {
        #expect(try prepared([("w", "100"), ("sharpen", text)]).sharpenTenths == tenths)
    }

    /// Blur and sharpen are CSS pixels: `dpr` multiplies them as it does the box.
    @Test func dprMultipliesBlurAndSharpen() throws {
        let r = try prepared([("w", "256"), ("blur", "2.5"), ("sharpen", "0.3"), ("dpr", "2")])
        #expect(r.blurTenths == 50 && r.sharpenTenths == 6 && r.width == 512)
        #expect(try prepared([("w", "100"), ("blur", "100"), ("dpr", "4")]).blurTenths == 4000)
        #expect(try key([("w", "512"), ("blur", "4")]) == key([("w", "256"), ("blur", "2"), ("dpr", "2")]))
        #expect(try parse([("w", "512"), ("blur", "4")]) == parse([("w", "256"), ("blur", "2"), ("dpr", "2")]))
        #expect(try key([("w", "512"), ("blur", "2")]) != key([("w", "256"), ("blur", "2"), ("dpr", "2")]))
    }

    // MARK: refused spellings: 400 naming the parameter

    @Test(arguments: [
        ("fp", "1e9"), ("fp", "0.5"), ("fp", "0.5,0.5,0.5"), ("fp", "1.001,0"), ("fp", "0,1.001"), ("fp", "1.1,0"),
        ("fp", "0.1234,0"), ("fp", ".5,.5"), ("fp", "0.,0"), ("fp", "1.,1"), ("fp", "00.5,0"), ("fp", "-0,0"),
        ("fp", "+0.5,0.5"), ("fp", " 0.5,0.5"), ("fp", "0.5, 0.5"), ("fp", "0.5;0.5"), ("fp", "0.5,"), ("fp", ",0.5"),
        ("fp", ""), ("fp", ","), ("fp", "2,0"), ("fp", "0x1,0"), ("fp", "0.5,0.5,"), ("fp", "١,0"), ("fp", "0.5e0,0"),
        ("bg", "zzzzzz"), ("bg", "#ffffff"), ("bg", "fff"), ("bg", "fffffff"), ("bg", "fffffffff"), ("bg", ""),
        ("bg", " ffffff"), ("bg", "ffffff "), ("bg", "0xffffff"), ("bg", "white"), ("bg", "ffffgg"),
        ("blur", "0.2"), ("blur", "100.1"), ("blur", "1e2"), ("blur", "2.55"), ("blur", "2.50"), ("blur", "5."),
        ("blur", ".5"), ("blur", "05"), ("blur", "00.5"), ("blur", "0"), ("blur", "0.0"), ("blur", "-1"), ("blur", "+1"),
        ("blur", ""), ("blur", " 1"), ("blur", "1 "), ("blur", "1,5"), ("blur", "0x10"), ("blur", "inf"),
        ("blur", "nan"), ("blur", "101"), ("blur", "1000"), ("blur", "99999999999999999999"), ("blur", "١"),
        ("blur", "1.5.5"), ("blur", "."),
        ("sharpen", "11"), ("sharpen", "10.1"), ("sharpen", "0.2"), ("sharpen", "0"), ("sharpen", "1e1"),
        ("sharpen", "2.25"), ("sharpen", "-0.5"), ("sharpen", "3."), ("sharpen", "03"),
        ("gravity", "CENTER"), ("gravity", "Center"), ("gravity", "centre"), ("gravity", ""), ("gravity", "north "),
        ("gravity", "north-east"), ("gravity", "top"), ("gravity", "smart"),
        ("fit", "CONTAIN"), ("fit", "pad"),
    ])
    func badValuesAre400NamingTheParameter(_ name: String, _ value: String) {
        do {
            _ = try parse(cover.filter { $0.0 != name } + [(name, value)])
            Issue.record("accepted \(name)=\(value)")
        } catch {
            guard case .badRequest(let message) = error else { Issue.record("\(name)=\(value): \(error)"); return }
            #expect(message.hasPrefix("\(name) must be "), "\(message)")
        }
    }

    @Test func repeatedParametersAre400() {
        for name in ["gravity", "fp", "bg", "blur", "sharpen"] {
            let value = ["gravity": "north", "fp": "0.5,0.5", "bg": "ffffff", "blur": "1", "sharpen": "1"][name]!
            #expect(throws: ServiceError.badRequest("parameter '\(name)' given twice")) {
                try parse(cover + [(name, value), (name, value)])
            }
        }
    }

    @Test func focalPointGoesWithCoverAloneAndNeverWithGravity() {
        #expect(throws: ServiceError.badRequest("fp and gravity cannot both be given")) {
            try parse(cover + [("fp", "0.5,0.5"), ("gravity", "north")])
        }
        #expect(throws: ServiceError.badRequest("fp and gravity cannot both be given")) {
            try parse(cover + [("gravity", "center"), ("fp", "0.5,0.5")])
        }
        for fit in ["inside", "fill", "contain"] {
            #expect(throws: ServiceError.badRequest("fp needs fit=cover, not fit=\(fit)")) {
                try parse([("w", "100"), ("h", "80"), ("fit", fit), ("fp", "0.5,0.5")])
            }
        }
        #expect(throws: ServiceError.badRequest("fp needs fit=cover, not fit=inside")) {
            try parse([("w", "100"), ("fp", "0.5,0.5")])
        }
    }

    @Test func containNeedsBothSides() throws {
        #expect(throws: ServiceError.badRequest("fit=contain needs both w and h")) { try parse([("w", "10"), ("fit", "contain")]) }
        #expect(try prepared(contain).fit == .contain)
    }

    // MARK: presets

    @Test func presetsFillCompositionAndTheirGravityYieldsToFp() throws {
        var config = ServiceConfiguration()
        config.output.presets["hero"] = .init(width: 300, height: 200, fit: .cover, format: .jpeg, gravity: .north,
                                              background: RGBAColor(r: 1, g: 2, b: 3), blurTenths: 15, sharpenTenths: 5)
        config.output.presets["thumb"] = .init(width: 64, height: 64, gravity: .south)
        let plain = try parse([("preset", "hero")], config).variant
        #expect(plain.prepared == PreparedVariant(width: 300, height: 200, fit: .cover, gravity: .north,
                                                  blurTenths: 15, sharpenTenths: 5))
        #expect(plain.background == RGBAColor(r: 1, g: 2, b: 3), "jpeg: the preset's bg is what alpha flattens onto")
        // A request's fp wins over the preset's gravity (not a 400).
        let pointed = try parse([("preset", "hero"), ("fp", "0.2,0.8")], config).variant.prepared
        #expect(pointed.gravity == nil && pointed.focalPoint == FocalPoint(x: 200, y: 800))
        // A request's own values win; dpr multiplies the preset's blur too.
        let own = try parse([("preset", "hero"), ("gravity", "east"), ("bg", "000000"), ("blur", "0.5"), ("dpr", "2")],
                            config).variant
        #expect(own.prepared.gravity == .east && own.prepared.blurTenths == 10 && own.prepared.sharpenTenths == 10)
        #expect(own.background == RGBAColor(r: 0, g: 0, b: 0))
        // A preset's inside fit makes its gravity inert, and refuses fp.
        #expect(try parse([("preset", "thumb")], config).variant.prepared.gravity == nil)
        #expect(try parse([("preset", "thumb"), ("fit", "cover")], config).variant.prepared.gravity == .south)
        #expect(throws: ServiceError.badRequest("fp needs fit=cover, not fit=inside")) {
            try parse([("preset", "thumb"), ("fp", "0.5,0.5")], config)
        }
        #expect(try parse([("preset", "thumb"), ("fit", "cover"), ("fp", "0.5,0.5")], config).variant.prepared.gravity == nil)
    }

    // MARK: the cache key (API.md § Cache key and ETag)

    @Test func equalValuesOfOtherSpellingsShareOneKey() throws {
        #expect(try key(cover + [("fp", "0.5,0.5")]) == key(cover + [("fp", "0.500,0.50")]))
        #expect(try key(cover + [("fp", "1,0")]) == key(cover + [("fp", "1.000,0.0")]))
        #expect(try key(cover + [("blur", "2")]) == key(cover + [("blur", "2.0")]))
        #expect(try key(cover + [("sharpen", "10")]) == key(cover + [("sharpen", "10.0")]))
        let jpeg = [("w", "100"), ("format", "jpeg")]
        #expect(try key(jpeg + [("bg", "FFFFFF")]) == key(jpeg + [("bg", "ffffff")]))
        #expect(try key(jpeg + [("bg", "FFFFFF")]) == key(jpeg + [("bg", "ffffffFF")]), "opaque alpha is no alpha")
        #expect(try key(jpeg + [("bg", "AbCdEf")]).hasSuffix("&bg=abcdef"), "lower-cased")
    }

    @Test func inertValuesStayOutOfTheKey() throws {
        let base = [("w", "100"), ("h", "80")]
        for fit in ["inside", "fill"] {
            #expect(try key(base + [("fit", fit), ("gravity", "north")]) == key(base + [("fit", fit)]), "\(fit)")
            #expect(try prepared(base + [("fit", fit), ("gravity", "attention")]).needsFocus == false)
        }
        for format in ["png", "webp", "avif", "rgba"] {
            let without = try parse(base + [("format", format)]).variant
            let with = try parse(base + [("format", format), ("bg", "ff0000")]).variant
            #expect(with == without && with.canonicalKey == without.canonicalKey, "\(format)")
        }
        // auto answered as WebP (or AVIF): bg is inert there, as for format=webp.
        var config = ServiceConfiguration()
        config.output.autoFormats = [.avif, .webp]
        let negotiated = try parse(base + [("bg", "ff0000")], config, accept: "image/webp").variant
        #expect(negotiated.format == .webp && negotiated.background == nil)
        #expect(negotiated.canonicalKey == (try key(base + [("format", "webp")], config)))
        #expect(try parse(base + [("bg", "ff0000")], config, accept: "image/avif").variant.background == nil)
    }

    @Test func givenValuesSplitTheKey() throws {
        let plain = try key(cover)
        var keys: Set<String> = [plain]
        for extra in [("gravity", "north"), ("gravity", "south"), ("gravity", "center"), ("gravity", "attention"),
                      ("fp", "0.5,0.5"), ("fp", "0.5,0.501"), ("blur", "1"), ("blur", "1.1"), ("sharpen", "1"),
                      ("sharpen", "1.1"), ("format", "jpeg")] {
            keys.insert(try key(cover + [extra]))
        }
        #expect(keys.count == 12, "every value its own entry: \(keys.sorted())")
        // bg: jpeg and auto (which may be JPEG) flatten onto it; contain pads with it whatever the format.
        #expect(try key([("w", "100"), ("format", "jpeg"), ("bg", "ff0000")]) != key([("w", "100"), ("format", "jpeg")]))
        #expect(try key([("w", "100"), ("bg", "ff0000")]) != key([("w", "100")]))
        #expect(try key(contain + [("format", "png"), ("bg", "ff0000")]) != key(contain + [("format", "png")]))
        #expect(try key(contain + [("format", "png"), ("bg", "ff0000")]) != key(contain + [("format", "png"), ("bg", "ff000080")]))
        #expect(try key(contain) != key(cover) && key(contain) != key([("w", "100"), ("h", "80")]))
    }

    /// Where `bg` goes: `PreparedVariant.background` pads `contain`;
    /// `ThumbnailVariant.background` is what a JPEG flattens onto.
    @Test func theBackgroundGoesWhereItActs() throws {
        let red = RGBAColor(r: 255, g: 0, b: 0)
        let containJPEG = try parse(contain + [("format", "jpeg"), ("bg", "ff0000")]).variant
        #expect(containJPEG.prepared.background == red && containJPEG.background == red)
        let containPNG = try parse(contain + [("format", "png"), ("bg", "ff0000")]).variant
        #expect(containPNG.prepared.background == red && containPNG.background == nil)
        let coverAuto = try parse(cover + [("bg", "ff0000")]).variant
        #expect(coverAuto.prepared.background == nil && coverAuto.background == red)
        let coverWebP = try parse(cover + [("format", "webp"), ("bg", "ff0000")]).variant
        #expect(coverWebP.prepared.background == nil && coverWebP.background == nil)
    }
}
