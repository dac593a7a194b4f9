import Foundation
import ThumbFetch
import ThumbImaging
import ThumbJSON
import ThumbRender
import ThumbService

extension ServiceConfiguration {
    /// Takes the service core's keys from the top level of the config file
    /// (Configuration.md); `DaemonConfiguration.parse` takes the rest.
    mutating func read(_ r: inout ConfigReader) throws(ConfigurationError) {
        if let v = try r.integer("workers", 0...1024) { workers = v }
        if let v = try r.integer("maxQueue", 1...1_000_000) { maxQueue = v }
        if let v = try r.integer("memoryCacheBytes", 0...Int.max) { memoryCacheBytes = v }
        if var d = try r.object("diskStore") {
            if let v = try d.nullableString("path") {
                if let p = v, p.isEmpty { throw ConfigurationError(key: "diskStore.path", "must not be empty") }
                diskStore.path = v
            }
            if let v = try d.integer("maxBytes", 0...Int.max) { diskStore.maxBytes = v }
            if let v = try d.integer("ttlSeconds", 0...Int.max) { diskStore.ttlSeconds = v }
            if let v = d.take("shared") { diskStore.shared = try Self.sharedStore(v) }
            try d.finish()
        }
        if var l = try r.object("limits") {
            if let v = try l.integer("maxSourceBytes", 1...Int.max) { limits.maxSourceBytes = v }
            if let v = try l.integer("maxSourcePixels", 1...Int.max) { limits.maxSourcePixels = v }
            if let v = try l.integer("maxOutputDimension", 1...65_535) { limits.maxOutputDimension = v }
            if let v = try l.integer("maxDecodeMemoryBytes", 1...Int.max) { limits.maxDecodeMemoryBytes = v }
            if let v = try l.seconds("maxRenderSeconds", 0.001...86_400) { limits.maxRenderSeconds = v }
            if let v = try l.integer("maxAnimationFrames", 1...100_000) { limits.maxAnimationFrames = v }
            if let v = try l.integer("maxAnimationPixels", 1...Int.max) { limits.maxAnimationPixels = v }
            if let v = try l.bool("jpegXLSources") { limits.jpegXLSources = v }
            try l.finish()
        }
        if var o = try r.object("origin") {
            if let v = try o.seconds("timeoutSeconds", 0.001...86_400) { origin.timeoutSeconds = v }
            if let v = try o.seconds("connectTimeoutSeconds", 0.001...86_400) { origin.connectTimeoutSeconds = v }
            if let v = try o.integer("maxRedirects", 0...20) { origin.maxRedirects = v }
            if let v = try o.strings("allowedHosts") {
                for host in v where !HostPattern.isValid(host) {
                    throw ConfigurationError(key: "origin.allowedHosts", "'\(host)' is not a host name or *.domain pattern")
                }
                origin.allowedHosts = v
            }
            if let v = try o.bool("allowPrivateNetworks") { origin.allowPrivateNetworks = v }
            if let v = try o.seconds("negativeCacheSeconds", 0...86_400 * 365) { origin.negativeCacheSeconds = v }
            if let v = try o.nullableString("caFile") {
                if let path = v {
                    var isDirectory: ObjCBool = false
                    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                          FileManager.default.isReadableFile(atPath: path) else {
                        throw ConfigurationError(key: "origin.caFile", "'\(path)' is not a readable file")
                    }
                }
                origin.caFile = v
            }
            if let v = try o.integer("maxConcurrentFetches", 1...1024) { origin.maxConcurrentFetches = v }
            try o.finish()
        }
        if var i = try r.object("info") {
            if let v = try i.integer("maxBatchItems", 1...1000) { info.maxBatchItems = v }
            try i.finish()
        }
        if var s = try r.object("s3") { try s3.read(&s) }
        try s3.validate()
        if let shared = diskStore.shared {
            guard s3.endpoint != nil else {
                throw ConfigurationError(key: "diskStore.shared", "needs s3.endpoint (the store it lives in)")
            }
            // Its objects are the fleet's cache, never a source: a client could read them, or plant what they trust.
            if s3.allowedBuckets.contains(where: { $0.lowercased() == shared.bucket.lowercased() }) {
                throw ConfigurationError(key: "s3.allowedBuckets",
                                         "'\(shared.bucket)' is diskStore.shared.bucket, which is never a source")
            }
        }
        if var o = try r.object("output") {
            if let v = try o.quality("defaultQuality") { output.defaultQuality = v }
            if let v = try o.integer("autoQualityTarget", AutoQuality.targetRange) { output.autoQualityTarget = v }
            if let v = try o.integer("cacheMaxAgeSeconds", 0...Int(Int32.max)) { output.cacheMaxAgeSeconds = v }
            if let v = try o.integer("staleWhileRevalidateSeconds", 0...Int(Int32.max)) {
                output.staleWhileRevalidateSeconds = v
            }
            if let v = try o.integer("errorMaxAgeSeconds", 0...Int(Int32.max)) { output.errorMaxAgeSeconds = v }
            if let v = try o.strings("autoFormats") {
                var formats: [OutputFormat] = []
                for name in v {
                    guard let format = OutputFormat(rawValue: name), [.jxl, .avif, .webp].contains(format) else {
                        throw ConfigurationError(key: "output.autoFormats", "'\(name)' is not jxl, avif or webp")
                    }
                    guard !formats.contains(format) else {
                        throw ConfigurationError(key: "output.autoFormats", "'\(name)' is listed twice")
                    }
                    formats.append(format)
                }
                output.autoFormats = formats
            }
            if let v = try o.strings("allowedSizes") {
                output.allowedSizes = try v.map { s throws(ConfigurationError) in
                    guard let size = Size(parsing: s) else {
                        throw ConfigurationError(key: "output.allowedSizes", "'\(s)' is not WxH")
                    }
                    return size
                }
            }
            if var p = try o.object("presets") {
                for (name, value) in p.takeAll() {
                    guard !name.isEmpty else { throw ConfigurationError(key: "output.presets", "empty preset name") }
                    output.presets[name] = try Preset(value, path: "output.presets.\(name)")
                }
            }
            try o.finish()
        }
    }
}

extension ServiceConfiguration.Size {
    /// Parses `"256x256"`.
    public init?(parsing text: String) {
        let parts = text.split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0,
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.first != "+" }) else { return nil }
        self.init(width: w, height: h)
    }
}

extension ServiceConfiguration.Preset {
    /// A preset's fields take the query's values (API.md § GET /thumbnail), in
    /// JSON types: `blur` and `sharpen` are numbers, as in prefetch items.
    init(_ value: JSONValue, path: String) throws(ConfigurationError) {
        var r = try ConfigReader(value, path: path)
        self.init(width: try r.integer("w", 1...65_535), height: try r.integer("h", 1...65_535))
        if let v = try r.string("fit") {
            guard let fit = Fit(rawValue: v) else {
                throw ConfigurationError(key: path + ".fit", "must be \(CompositionParameters.fitRule)")
            }
            self.fit = fit
        }
        if let v = try r.string("format") {
            guard let format = OutputFormat(rawValue: v) else {
                throw ConfigurationError(key: path + ".format", "must be auto, jpeg, png, webp, avif or rgba")
            }
            self.format = format
        }
        quality = try r.quality("q")
        if let v = try r.string("gravity") {
            guard let gravity = Gravity(rawValue: v) else {
                throw ConfigurationError(key: path + ".gravity", "must be \(CompositionParameters.gravityRule)")
            }
            self.gravity = gravity
        }
        if let v = try r.string("bg") {
            guard let color = RGBAColor(hex: v) else {
                throw ConfigurationError(key: path + ".bg", "must be \(CompositionParameters.backgroundRule)")
            }
            background = color
        }
        blurTenths = try Self.tenths(&r, "blur", CompositionParameters.blurRange, CompositionParameters.blurRule)
        sharpenTenths = try Self.tenths(&r, "sharpen", CompositionParameters.sharpenRange,
                                        CompositionParameters.sharpenRule)
        animated = try r.bool("animated")
        if r.take("fp") != nil {
            throw ConfigurationError(key: r.path("fp"), "is not a preset field: a focal point belongs to one source")
        }
        try r.finish()
    }

    /// A JSON number of tenths within `range`, or nil when the key is absent.
    private static func tenths(_ r: inout ConfigReader, _ key: String, _ range: ClosedRange<Int>,
                               _ rule: String) throws(ConfigurationError) -> Int? {
        guard let value = r.take(key) else { return nil }
        let tenths: Int? = switch value {
        case .integer(let n): CompositionParameters.tenths(of: Double(n))
        case .number(let d): CompositionParameters.tenths(of: d)
        default: nil
        }
        guard let tenths, range.contains(tenths) else {
            throw ConfigurationError(key: r.path(key), "must be a number: \(rule)")
        }
        return tenths
    }
}

extension ServiceConfiguration {
    /// `diskStore.shared`: null, or `{"bucket": "NAME", "prefix": "thumbd/",
    /// "keyFile": PATH}` (SeveralInstances.md). The prefix is where thumbd's
    /// objects go: it becomes part of every key, so it is held to characters
    /// that need no escaping and to a length that leaves room for the digest.
    /// The key file is required and read here, so a reload reads it again.
    static func sharedStore(_ value: JSONValue) throws(ConfigurationError) -> SharedStoreLocation? {
        if case .null = value { return nil }
        var r = try ConfigReader(value, path: "diskStore.shared")
        guard let bucket = try r.string("bucket") else {
            throw ConfigurationError(key: "diskStore.shared.bucket", "is required (or set diskStore.shared to null)")
        }
        guard S3Location.isValidBucket(bucket) else {
            throw ConfigurationError(key: "diskStore.shared.bucket", "'\(bucket)' is not a valid S3 bucket name")
        }
        let prefix = try r.string("prefix") ?? "thumbd/"
        let allowed = prefix.utf8.allSatisfy { c in
            (0x61...0x7A).contains(c) || (0x41...0x5A).contains(c) || (0x30...0x39).contains(c) || "-_./".utf8.contains(c)
        }
        guard allowed, prefix.utf8.count <= 256, !prefix.hasPrefix("/") else {
            throw ConfigurationError(key: "diskStore.shared.prefix",
                                     "must be at most 256 of A-Z a-z 0-9 - _ . / and not start with /")
        }
        guard let keyFile = try r.string("keyFile") else {
            throw ConfigurationError(key: "diskStore.shared.keyFile",
                                     "is required: the file of the fleet's key that authenticates the shared store")
        }
        let keys = try KeyFile.sharedStoreKeys(keyFile)
        try r.finish()
        return SharedStoreLocation(bucket: bucket, prefix: prefix, keyFile: keyFile, keys: keys)
    }
}
