import Foundation
import ThumbHTTP
import ThumbJSON
import ThumbService

extension DaemonConfiguration {
    /// Reads and validates a config file (Configuration.md): every key optional, an
    /// unknown key or a bad value is an error naming the key.
    public static func load(path: String) throws(ConfigurationError) -> DaemonConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(key: "", "cannot read \(path)")
        }
        return try parse([UInt8](data))
    }

    public static func parse(_ bytes: [UInt8]) throws(ConfigurationError) -> DaemonConfiguration {
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes)
        } catch {
            throw ConfigurationError(key: "", error.description)
        }
        var c = DaemonConfiguration()
        var r = try ConfigReader(json, path: "")
        if let v = try r.string("listen") { c.listen = try validListen(v) }
        try c.service.read(&r)
        if var h = try r.object("http") {
            if let v = try h.integer("maxConnections", 1...1_000_000) { c.http.maxConnections = v }
            if let v = try h.integer("maxHeaderBytes", 1024...1_048_576) { c.http.maxHeaderBytes = v }
            if let v = try h.seconds("requestTimeoutSeconds", 0.001...3600) { c.http.requestTimeoutSeconds = v }
            if let v = try h.seconds("idleTimeoutSeconds", 0.001...86_400) { c.http.idleTimeoutSeconds = v }
            if let v = try h.seconds("sendTimeoutSeconds", 0.001...86_400) { c.http.sendTimeoutSeconds = v }
            if let v = try h.integer("maxPendingResponseBytes", 65_536...Int.max) { c.http.maxPendingResponseBytes = v }
            try h.finish()
        }
        if var s = try r.object("security") {
            if let v = try s.nullableString("signingKey") { c.security.signingKey = try nonEmpty(v, "security.signingKey") }
            if let v = try s.nullableString("adminToken") { c.security.adminToken = try nonEmpty(v, "security.adminToken") }
            try s.finish()
        }
        if var s = try r.object("sandbox") {
            switch s.take("user") {
            case nil: break
            case .string(let name)?: c.sandbox.user = .name(name)
            case .integer(let id)?: c.sandbox.user = .id(id)
            default: throw ConfigurationError(key: "sandbox.user", "must be a user name or a uid")
            }
            try s.finish()
            _ = try c.sandbox.identity()   // a name that does not resolve stops start-up and check-config
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
