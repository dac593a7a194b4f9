import ThumbFetch
import ThumbImaging
import ThumbRender

/// A validated `/thumbnail` request (API.md § GET /thumbnail): the source and the variant,
/// built from parsed values so equal requests have equal keys however their
/// query strings were spelled.
public struct ThumbnailRequest: Hashable, Sendable {
    /// The source, parsed once; what the fetcher asks for.
    public let source: OriginalSource
    /// The normalized source URL: every spelling of one source is one source.
    public var sourceURL: String { source.url }
    /// The resolved variant: the box after `dpr`, and `auto` negotiated to
    /// WebP/AVIF when `Accept` allows (else `auto`, the PNG/JPEG rule).
    public var variant: ThumbnailVariant
    /// True when the effective format was `auto` and `output.autoFormats` is
    /// not empty: the answer depends on `Accept` and carries `Vary: Accept`.
    /// Not part of the key: `auto` answered as WebP and `webp` share one entry.
    public var variesByAccept: Bool
    /// The variant an animated GIF or WebP source is answered with instead (WebP; ThumbnailRequest+Animation.swift).
    public var animationVariant: ThumbnailVariant?

    /// The source's host, as the allowlist sees it; nil for an `s3://`
    /// source, which `origin.allowedHosts` does not cover (its authority is
    /// a bucket, which `s3.allowedBuckets` rules).
    public var sourceHost: String? { source.host }

    public static func == (a: Self, b: Self) -> Bool {
        a.sourceURL == b.sourceURL && a.variant == b.variant && a.animationVariant == b.animationVariant
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(sourceURL)
        hasher.combine(variant)
        hasher.combine(animationVariant)
    }

    /// The parameters `/thumbnail` knows; any other is a `400`.
    static let knownParameters: Set<String> = ["url", "w", "h", "fit", "enlarge", "format", "q", "dpr", "preset", "sig",
                                               "gravity", "fp", "bg", "blur", "sharpen", "animated"]

    /// Validates decoded query parameters against the rules of API.md § GET /thumbnail and the
    /// configuration's limits, presets and allowed sizes.
    /// `accept`: the request's `Accept` header, for `format=auto`; nil (as
    /// for prefetch) means the PNG/JPEG rule.
    public init(query: [(name: String, value: String)], config: ServiceConfiguration,
                accept: String? = nil) throws(ServiceError) {
        var values: [String: String] = [:]
        for (name, value) in query {
            guard Self.knownParameters.contains(name) else { throw .badRequest("unknown parameter '\(name)'") }
            guard values.updateValue(value, forKey: name) == nil else {
                throw .badRequest("parameter '\(name)' given twice")
            }
        }
        let source = try InfoRequest.source(values["url"], reservedBucket: config.diskStore.shared?.bucket)

        var preset: ServiceConfiguration.Preset?
        if let name = values["preset"] {
            guard let found = config.output.presets[name] else { throw .badRequest("unknown preset '\(name)'") }
            preset = found
        }
        let maxSide = config.limits.maxOutputDimension
        let width = try Self.integer(values["w"], "w", 1...maxSide) ?? preset?.width
        let height = try Self.integer(values["h"], "h", 1...maxSide) ?? preset?.height
        let quality = try Self.quality(values["q"]) ?? preset?.quality ?? config.output.defaultQuality
        var fit = preset?.fit ?? .inside
        if let text = values["fit"] {
            guard let value = Fit(rawValue: text) else {
                throw .badRequest("fit must be \(CompositionParameters.fitRule)")
            }
            fit = value
        }
        var format = preset?.format ?? .auto
        if let text = values["format"] {
            guard let value = OutputFormat(rawValue: text) else {
                throw .badRequest("format must be auto, jpeg, png, webp, avif or rgba")
            }
            format = value
        }
        var dpr = 1
        if let text = values["dpr"] {
            guard text.utf8.count == 1, let digit = Int(text), (1...4).contains(digit) else {
                throw .badRequest("dpr must be 1, 2, 3 or 4")
            }
            dpr = digit
        }
        var animated = preset?.animated
        if let text = values["animated"] {
            guard text == "0" || text == "1" else { throw .badRequest("animated must be 0 or 1") }
            animated = text == "1"
        }
        var enlarge = false
        if let text = values["enlarge"] {
            guard text == "0" || text == "1" else { throw .badRequest("enlarge must be 0 or 1") }
            enlarge = text == "1"
        }
        let given: CompositionParameters
        do {
            given = try CompositionParameters(query: values)
        } catch {
            throw ServiceError(error)
        }
        // Both say where the window goes; which one a client meant is unknowable.
        if given.focalPoint != nil, given.gravity != nil {
            throw .badRequest("fp and gravity cannot both be given")
        }
        let composition = given.filled(from: preset)
        if composition.focalPoint != nil, fit != .cover {
            throw .badRequest("fp needs fit=cover, not fit=\(fit.rawValue)")
        }

        guard width != nil || height != nil else { throw .badRequest("give w, h or a preset") }
        if fit != .inside, width == nil || height == nil {
            throw .badRequest("fit=\(fit.rawValue) needs both w and h")
        }
        if width.map({ $0 > maxSide }) == true || height.map({ $0 > maxSide }) == true {
            throw .badRequest("a preset side exceeds maxOutputDimension \(maxSide)")
        }
        if !config.output.allowedSizes.isEmpty {
            let box = width.flatMap { w in height.map { h in ServiceConfiguration.Size(width: w, height: h) } }
            let presetBox = preset.flatMap { p in
                p.width.flatMap { w in p.height.map { ServiceConfiguration.Size(width: w, height: $0) } }
            }
            let presetUnchanged = preset != nil && width == preset?.width && height == preset?.height
            guard presetUnchanged || (box.map(config.output.allowedSizes.contains) ?? false)
                    || (box != nil && box == presetBox) else {
                throw .badRequest("size not allowed; allowed: \(config.output.allowedSizes.map(\.description).joined(separator: ", "))")
            }
        }
        // After the allowedSizes check, which is about the box as asked.
        let scaledWidth = width.map { $0 * dpr }, scaledHeight = height.map { $0 * dpr }
        if scaledWidth.map({ $0 > maxSide }) == true || scaledHeight.map({ $0 > maxSide }) == true {
            throw .badRequest("the box times dpr \(dpr) exceeds maxOutputDimension \(maxSide)")
        }
        variesByAccept = format == .auto && !config.output.autoFormats.isEmpty
        if format == .auto, let negotiated = AcceptNegotiation.choose(from: config.output.autoFormats, accept: accept) {
            format = negotiated
        }
        self.source = source
        let plain = ThumbnailVariant(prepared: PreparedVariant(width: scaledWidth, height: scaledHeight, fit: fit,
                                                               enlarge: enlarge),
                                     format: format, quality: quality, animated: animated)
        // After negotiation: `bg` is inert for `auto` answered as WebP or AVIF.
        variant = composition.applied(to: plain, dpr: dpr)
        animationVariant = Self.animationVariant(variant, accept: accept, negotiates: variesByAccept)
    }

    /// `q`: 1…100, or `auto` (`AutoQuality.unresolved`) — in lower case
    /// only (SPEC §17): `AUTO` is a `400` like any other word.
    static func quality(_ text: String?) throws(ServiceError) -> Int? {
        if text == "auto" { return AutoQuality.unresolved }
        do {
            return try integer(text, "q", 1...100)
        } catch {
            throw .badRequest("q must be an integer in 1…100 or auto")
        }
    }

    /// Strict decimal: digits only (no sign, no spaces), within `range`.
    private static func integer(_ text: String?, _ name: String,
                                _ range: ClosedRange<Int>) throws(ServiceError) -> Int? {
        guard let text else { return nil }
        guard !text.isEmpty, text.utf8.count <= 9, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let value = Int(text), range.contains(value) else {
            throw .badRequest("\(name) must be an integer in \(range.lowerBound)…\(range.upperBound)")
        }
        return value
    }
}
