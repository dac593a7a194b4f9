import ThumbImaging

/// A validated `/thumbnail` request (SPEC §3): the source and the variant,
/// built from parsed values so equal requests have equal keys however their
/// query strings were spelled.
public struct ThumbnailRequest: Hashable, Sendable {
    public var sourceURL: String
    public var variant: ThumbnailVariant

    /// The parameters SPEC §3 knows; any other is a `400`.
    static let knownParameters: Set<String> = ["url", "w", "h", "fit", "enlarge", "format", "q", "preset", "sig"]
    static let maxURLBytes = 2048

    /// Validates decoded query parameters against the rules of SPEC §3 and the
    /// configuration's limits, presets and allowed sizes.
    public init(query: [(name: String, value: String)], config: ServiceConfiguration) throws(ServiceError) {
        var values: [String: String] = [:]
        for (name, value) in query {
            guard Self.knownParameters.contains(name) else { throw .badRequest("unknown parameter '\(name)'") }
            guard values.updateValue(value, forKey: name) == nil else {
                throw .badRequest("parameter '\(name)' given twice")
            }
        }
        guard let url = values["url"], !url.isEmpty else { throw .badRequest("missing parameter 'url'") }
        guard url.utf8.count <= Self.maxURLBytes else {
            throw .badRequest("url longer than \(Self.maxURLBytes) bytes")
        }
        let lower = url.prefix(8).lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            throw .badRequest("url must be an absolute http or https URL")
        }

        var preset: ServiceConfiguration.Preset?
        if let name = values["preset"] {
            guard let found = config.output.presets[name] else { throw .badRequest("unknown preset '\(name)'") }
            preset = found
        }
        let maxSide = config.limits.maxOutputDimension
        let width = try Self.integer(values["w"], "w", 1...maxSide) ?? preset?.width
        let height = try Self.integer(values["h"], "h", 1...maxSide) ?? preset?.height
        let quality = try Self.integer(values["q"], "q", 1...100) ?? preset?.quality ?? config.output.defaultQuality
        var fit = preset?.fit ?? .inside
        if let text = values["fit"] {
            guard let value = Fit(rawValue: text) else { throw .badRequest("fit must be inside, cover or fill") }
            fit = value
        }
        var format = preset?.format ?? .auto
        if let text = values["format"] {
            guard let value = OutputFormat(rawValue: text) else {
                throw .badRequest("format must be auto, jpeg, png or rgba")
            }
            format = value
        }
        var enlarge = false
        if let text = values["enlarge"] {
            guard text == "0" || text == "1" else { throw .badRequest("enlarge must be 0 or 1") }
            enlarge = text == "1"
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
        sourceURL = url
        variant = ThumbnailVariant(prepared: PreparedVariant(width: width, height: height, fit: fit, enlarge: enlarge),
                                   format: format, quality: quality)
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
