import ThumbFetch
import ThumbJSON
import Foundation
import ThumbHTTP
import ThumbImaging

extension ServiceConfiguration {
    /// Reads and validates a config file (Configuration.md): every key optional, an
    /// unknown key or a bad value is an error naming the key.
    public static func load(path: String) throws(ConfigurationError) -> ServiceConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(key: "", "cannot read \(path)")
        }
        return try parse([UInt8](data))
    }

    public static func parse(_ bytes: [UInt8]) throws(ConfigurationError) -> ServiceConfiguration {
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes)
        } catch {
            throw ConfigurationError(key: "", error.description)
        }
        var c = ServiceConfiguration()
        var r = try ConfigReader(json, path: "")
        if let v = try r.string("listen") { c.listen = try validListen(v) }
        if let v = try r.integer("workers", 0...1024) { c.workers = v }
        if let v = try r.integer("maxQueue", 1...1_000_000) { c.maxQueue = v }
        if let v = try r.integer("memoryCacheBytes", 0...Int.max) { c.memoryCacheBytes = v }
        if var d = try r.object("diskStore") {
            if let v = try d.nullableString("path") {
                if let p = v, p.isEmpty { throw ConfigurationError(key: "diskStore.path", "must not be empty") }
                c.diskStore.path = v
            }
            if let v = try d.integer("maxBytes", 0...Int.max) { c.diskStore.maxBytes = v }
            if let v = try d.integer("ttlSeconds", 0...Int.max) { c.diskStore.ttlSeconds = v }
            try d.finish()
        }
        if var l = try r.object("limits") {
            if let v = try l.integer("maxSourceBytes", 1...Int.max) { c.limits.maxSourceBytes = v }
            if let v = try l.integer("maxSourcePixels", 1...Int.max) { c.limits.maxSourcePixels = v }
            if let v = try l.integer("maxOutputDimension", 1...65_535) { c.limits.maxOutputDimension = v }
            if let v = try l.integer("maxDecodeMemoryBytes", 1...Int.max) { c.limits.maxDecodeMemoryBytes = v }
            if let v = try l.seconds("maxRenderSeconds", 0.001...86_400) { c.limits.maxRenderSeconds = v }
            try l.finish()
        }
        if var o = try r.object("origin") {
            if let v = try o.seconds("timeoutSeconds", 0.001...86_400) { c.origin.timeoutSeconds = v }
            if let v = try o.seconds("connectTimeoutSeconds", 0.001...86_400) { c.origin.connectTimeoutSeconds = v }
            if let v = try o.integer("maxRedirects", 0...20) { c.origin.maxRedirects = v }
            if let v = try o.strings("allowedHosts") {
                for host in v where !HostPattern.isValid(host) {
                    throw ConfigurationError(key: "origin.allowedHosts", "'\(host)' is not a host name or *.domain pattern")
                }
                c.origin.allowedHosts = v
            }
            if let v = try o.bool("allowPrivateNetworks") { c.origin.allowPrivateNetworks = v }
            if let v = try o.seconds("negativeCacheSeconds", 0...86_400 * 365) { c.origin.negativeCacheSeconds = v }
            if let v = try o.nullableString("caFile") {
                if let path = v {
                    var isDirectory: ObjCBool = false
                    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                          FileManager.default.isReadableFile(atPath: path) else {
                        throw ConfigurationError(key: "origin.caFile", "'\(path)' is not a readable file")
                    }
                }
                c.origin.caFile = v
            }
            if let v = try o.integer("maxConcurrentFetches", 1...1024) { c.origin.maxConcurrentFetches = v }
            try o.finish()
        }
        if var h = try r.object("http") {
            if let v = try h.integer("maxConnections", 1...1_000_000) { c.http.maxConnections = v }
            if let v = try h.integer("maxHeaderBytes", 1024...1_048_576) { c.http.maxHeaderBytes = v }
            if let v = try h.seconds("requestTimeoutSeconds", 0.001...3600) { c.http.requestTimeoutSeconds = v }
            if let v = try h.seconds("idleTimeoutSeconds", 0.001...86_400) { c.http.idleTimeoutSeconds = v }
            if let v = try h.seconds("sendTimeoutSeconds", 0.001...86_400) { c.http.sendTimeoutSeconds = v }
            if let v = try h.integer("maxPendingResponseBytes", 65_536...Int.max) { c.http.maxPendingResponseBytes = v }
            try h.finish()
        }
        if var o = try r.object("output") {
            if let v = try o.integer("defaultQuality", 1...100) { c.output.defaultQuality = v }
            if let v = try o.integer("cacheMaxAgeSeconds", 0...Int(Int32.max)) { c.output.cacheMaxAgeSeconds = v }
            if let v = try o.integer("staleWhileRevalidateSeconds", 0...Int(Int32.max)) {
                c.output.staleWhileRevalidateSeconds = v
            }
            if let v = try o.integer("errorMaxAgeSeconds", 0...Int(Int32.max)) { c.output.errorMaxAgeSeconds = v }
            if let v = try o.strings("autoFormats") {
                var formats: [OutputFormat] = []
                for name in v {
                    guard let format = OutputFormat(rawValue: name), format == .webp || format == .avif else {
                        throw ConfigurationError(key: "output.autoFormats", "'\(name)' is not avif or webp")
                    }
                    guard !formats.contains(format) else {
                        throw ConfigurationError(key: "output.autoFormats", "'\(name)' is listed twice")
                    }
                    formats.append(format)
                }
                c.output.autoFormats = formats
            }
            if let v = try o.strings("allowedSizes") {
                c.output.allowedSizes = try v.map { s throws(ConfigurationError) in
                    guard let size = Size(parsing: s) else {
                        throw ConfigurationError(key: "output.allowedSizes", "'\(s)' is not WxH")
                    }
                    return size
                }
            }
            if var p = try o.object("presets") {
                for (name, value) in p.takeAll() {
                    guard !name.isEmpty else { throw ConfigurationError(key: "output.presets", "empty preset name") }
                    c.output.presets[name] = try Preset(value, path: "output.presets.\(name)")
                }
            }
            try o.finish()
        }
        if var s = try r.object("security") {
            if let v = try s.nullableString("signingKey") { c.security.signingKey = try nonEmpty(v, "security.signingKey") }
            if let v = try s.nullableString("adminToken") { c.security.adminToken = try nonEmpty(v, "security.adminToken") }
            try s.finish()
        }
        if var l = try r.object("log") {
            if let v = try l.string("level") {
                guard let level = LogLevel(rawValue: v) else {
                    throw ConfigurationError(key: "log.level", "must be debug, info, warning or error")
                }
                c.log.level = level
            }
            if let v = try l.bool("accessLog") { c.log.accessLog = v }
            try l.finish()
        }
        try r.finish()
        return c
    }

    private static func nonEmpty(_ value: String?, _ key: String) throws(ConfigurationError) -> String? {
        if let value, value.isEmpty { throw ConfigurationError(key: key, "must not be empty (use null to turn it off)") }
        return value
    }

    private static func validListen(_ value: String) throws(ConfigurationError) -> String {
        guard ListenAddress(value) != nil else {
            throw ConfigurationError(key: "listen", "must be IP:PORT, localhost:PORT, [IPv6]:PORT or unix:/path, not '\(value)'")
        }
        return value
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
    init(_ value: JSONValue, path: String) throws(ConfigurationError) {
        var r = try ConfigReader(value, path: path)
        width = try r.integer("w", 1...65_535)
        height = try r.integer("h", 1...65_535)
        if let v = try r.string("fit") {
            guard let fit = Fit(rawValue: v) else { throw ConfigurationError(key: path + ".fit", "must be inside, cover or fill") }
            self.fit = fit
        }
        if let v = try r.string("format") {
            guard let format = OutputFormat(rawValue: v) else {
                throw ConfigurationError(key: path + ".format", "must be auto, jpeg, png, webp, avif or rgba")
            }
            self.format = format
        }
        quality = try r.integer("q", 1...100)
        try r.finish()
    }
}
