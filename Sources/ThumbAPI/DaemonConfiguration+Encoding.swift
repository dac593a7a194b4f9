import ThumbJSON
import ThumbRender
import ThumbService

extension DaemonConfiguration {
    /// The effective configuration as JSON, in the shape of the config file
    /// (what `thumbd check-config` prints). Secrets are masked.
    public var json: JSONValue {
        func opt(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
        func secret(_ s: String?) -> JSONValue { s == nil ? .null : .string("(set)") }
        // `blur: 2` rather than `2.0`; `2.5` as a number (exact to a tenth, reads back the same).
        func tenths(_ t: Int) -> JSONValue { t % 10 == 0 ? .integer(t / 10) : .number(Double(t) / 10) }
        let presets: [(key: String, value: JSONValue)] = service.output.presets.sorted { $0.key < $1.key }.map { name, p in
            var fields: [(key: String, value: JSONValue)] = []
            if let w = p.width { fields.append(("w", .integer(w))) }
            if let h = p.height { fields.append(("h", .integer(h))) }
            if let f = p.fit { fields.append(("fit", .string(f.rawValue))) }
            if let f = p.format { fields.append(("format", .string(f.rawValue))) }
            if let q = p.quality { fields.append(("q", Self.quality(q))) }
            if let g = p.gravity { fields.append(("gravity", .string(g.rawValue))) }
            if let bg = p.background { fields.append(("bg", .string(bg.hex))) }
            if let t = p.blurTenths { fields.append(("blur", tenths(t))) }
            if let t = p.sharpenTenths { fields.append(("sharpen", tenths(t))) }
            if let a = p.animated { fields.append(("animated", .bool(a))) }
            return (name, .object(fields))
        }
        return .object([
            ("listen", .string(listen)),
            ("workers", .integer(service.workers)),
            ("maxQueue", .integer(service.maxQueue)),
            ("memoryCacheBytes", .integer(service.memoryCacheBytes)),
            ("diskStore", .object([
                ("path", opt(service.diskStore.path)),
                ("maxBytes", .integer(service.diskStore.maxBytes)),
                ("ttlSeconds", .integer(service.diskStore.ttlSeconds)),
                ("shared", service.diskStore.shared.map {
                    // The key file's path, never its keys.
                    .object([("bucket", .string($0.bucket)), ("prefix", .string($0.prefix)), ("keyFile", opt($0.keyFile))])
                } ?? .null),
            ])),
            ("limits", .object([
                ("maxSourceBytes", .integer(service.limits.maxSourceBytes)),
                ("maxSourcePixels", .integer(service.limits.maxSourcePixels)),
                ("maxOutputDimension", .integer(service.limits.maxOutputDimension)),
                ("maxDecodeMemoryBytes", .integer(service.limits.maxDecodeMemoryBytes)),
                ("maxRenderSeconds", .number(service.limits.maxRenderSeconds)),
                ("maxAnimationFrames", .integer(service.limits.maxAnimationFrames)),
                ("maxAnimationPixels", .integer(service.limits.maxAnimationPixels)),
                ("jpegXLSources", .bool(service.limits.jpegXLSources)),
            ])),
            ("origin", .object([
                ("timeoutSeconds", .number(service.origin.timeoutSeconds)),
                ("connectTimeoutSeconds", .number(service.origin.connectTimeoutSeconds)),
                ("maxRedirects", .integer(service.origin.maxRedirects)),
                ("allowedHosts", .array(service.origin.allowedHosts.map(JSONValue.string))),
                ("allowPrivateNetworks", .bool(service.origin.allowPrivateNetworks)),
                ("negativeCacheSeconds", .number(service.origin.negativeCacheSeconds)),
                ("caFile", service.origin.caFile.map(JSONValue.string) ?? .null),
                ("maxConcurrentFetches", .integer(service.origin.maxConcurrentFetches)),
            ])),
            ("http", .object([
                ("maxConnections", .integer(http.maxConnections)),
                ("maxHeaderBytes", .integer(http.maxHeaderBytes)),
                ("requestTimeoutSeconds", .number(http.requestTimeoutSeconds)),
                ("idleTimeoutSeconds", .number(http.idleTimeoutSeconds)),
                ("sendTimeoutSeconds", .number(http.sendTimeoutSeconds)),
                ("maxPendingResponseBytes", .integer(http.maxPendingResponseBytes)),
            ])),
            ("output", .object([
                ("defaultQuality", Self.quality(service.output.defaultQuality)),
                ("autoQualityTarget", .integer(service.output.autoQualityTarget)),
                ("cacheMaxAgeSeconds", .integer(service.output.cacheMaxAgeSeconds)),
                ("staleWhileRevalidateSeconds", .integer(service.output.staleWhileRevalidateSeconds)),
                ("errorMaxAgeSeconds", .integer(service.output.errorMaxAgeSeconds)),
                ("autoFormats", .array(service.output.autoFormats.map { .string($0.rawValue) })),
                ("allowedSizes", .array(service.output.allowedSizes.map { .string($0.description) })),
                ("presets", .object(presets)),
            ])),
            ("info", .object([("maxBatchItems", .integer(service.info.maxBatchItems))])),
            ("s3", .object([
                ("endpoint", opt(service.s3.endpoint)),
                ("region", .string(service.s3.region)),
                ("accessKeyId", opt(service.s3.accessKeyId)),
                // Read from a file: the file is named, and the key itself is shown nowhere.
                ("secretAccessKey", service.s3.secretAccessKeyFile == nil ? secret(service.s3.secretAccessKey?.description) : .null),
                ("secretAccessKeyFile", opt(service.s3.secretAccessKeyFile)),
                ("pathStyle", .bool(service.s3.pathStyle)),
                ("allowedBuckets", .array(service.s3.allowedBuckets.map(JSONValue.string))),
                ("timeoutSeconds", .number(service.s3.timeoutSeconds)),
            ])),
            ("security", .object([
                ("signingKey", secret(security.signingKey)),
                ("adminToken", secret(security.adminToken)),
            ])),
            ("sandbox", .object([
                ("user", {
                    switch sandbox.user {
                    case .name(let name): JSONValue.string(name)
                    case .id(let id): JSONValue.integer(id)
                    }
                }()),
            ])),
            ("log", .object([
                ("level", .string(log.level.rawValue)),
                ("accessLog", .bool(log.accessLog)),
            ])),
        ])
    }

    /// A `q` as the config file spells it: an integer, or `"auto"`.
    static func quality(_ q: Int) -> JSONValue { q == AutoQuality.unresolved ? .string("auto") : .integer(q) }
}
