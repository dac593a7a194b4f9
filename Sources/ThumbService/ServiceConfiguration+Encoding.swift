import ThumbJSON
extension ServiceConfiguration {
    /// The effective configuration as JSON, in the shape of the config file
    /// (what `thumbd check-config` prints). Secrets are masked.
    public var json: JSONValue {
        func opt(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
        func secret(_ s: String?) -> JSONValue { s == nil ? .null : .string("(set)") }
        let presets: [(key: String, value: JSONValue)] = output.presets.sorted { $0.key < $1.key }.map { name, p in
            var fields: [(key: String, value: JSONValue)] = []
            if let w = p.width { fields.append(("w", .integer(w))) }
            if let h = p.height { fields.append(("h", .integer(h))) }
            if let f = p.fit { fields.append(("fit", .string(f.rawValue))) }
            if let f = p.format { fields.append(("format", .string(f.rawValue))) }
            if let q = p.quality { fields.append(("q", .integer(q))) }
            return (name, .object(fields))
        }
        return .object([
            ("listen", .string(listen)),
            ("workers", .integer(workers)),
            ("maxQueue", .integer(maxQueue)),
            ("memoryCacheBytes", .integer(memoryCacheBytes)),
            ("diskStore", .object([
                ("path", opt(diskStore.path)),
                ("maxBytes", .integer(diskStore.maxBytes)),
                ("ttlSeconds", .integer(diskStore.ttlSeconds)),
            ])),
            ("limits", .object([
                ("maxSourceBytes", .integer(limits.maxSourceBytes)),
                ("maxSourcePixels", .integer(limits.maxSourcePixels)),
                ("maxOutputDimension", .integer(limits.maxOutputDimension)),
                ("maxDecodeMemoryBytes", .integer(limits.maxDecodeMemoryBytes)),
                ("maxRenderSeconds", .number(limits.maxRenderSeconds)),
            ])),
            ("origin", .object([
                ("timeoutSeconds", .number(origin.timeoutSeconds)),
                ("connectTimeoutSeconds", .number(origin.connectTimeoutSeconds)),
                ("maxRedirects", .integer(origin.maxRedirects)),
                ("allowedHosts", .array(origin.allowedHosts.map(JSONValue.string))),
                ("allowPrivateNetworks", .bool(origin.allowPrivateNetworks)),
                ("negativeCacheSeconds", .number(origin.negativeCacheSeconds)),
                ("caFile", origin.caFile.map(JSONValue.string) ?? .null),
                ("maxConcurrentFetches", .integer(origin.maxConcurrentFetches)),
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
                ("defaultQuality", .integer(output.defaultQuality)),
                ("cacheMaxAgeSeconds", .integer(output.cacheMaxAgeSeconds)),
                ("staleWhileRevalidateSeconds", .integer(output.staleWhileRevalidateSeconds)),
                ("errorMaxAgeSeconds", .integer(output.errorMaxAgeSeconds)),
                ("autoFormats", .array(output.autoFormats.map { .string($0.rawValue) })),
                ("allowedSizes", .array(output.allowedSizes.map { .string($0.description) })),
                ("presets", .object(presets)),
            ])),
            ("security", .object([
                ("signingKey", secret(security.signingKey)),
                ("adminToken", secret(security.adminToken)),
            ])),
            ("log", .object([
                ("level", .string(log.level.rawValue)),
                ("accessLog", .bool(log.accessLog)),
            ])),
        ])
    }
}
