import ThumbJSON
import ThumbRender

/// Walks one JSON object of the config file, taking keys by name and type and
/// refusing, at `finish()`, any key nobody took: a typo must stop start-up,
/// not silently fall back to a default.
struct ConfigReader {
    private let prefix: String
    private var members: [(key: String, value: JSONValue)]

    init(_ value: JSONValue, path: String) throws(ConfigurationError) {
        guard case .object(let members) = value else {
            throw ConfigurationError(key: path, "must be an object, not \(value.typeName)")
        }
        self.prefix = path.isEmpty ? "" : path + "."
        self.members = members
    }

    func path(_ key: String) -> String { prefix + key }

    /// Removes and returns a key's value; nil when absent.
    mutating func take(_ key: String) -> JSONValue? {
        guard let index = members.firstIndex(where: { $0.key == key }) else { return nil }
        return members.remove(at: index).value
    }

    mutating func integer(_ key: String, _ range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let value = take(key) else { return nil }
        guard case .integer(let v) = value, range.contains(v) else {
            throw ConfigurationError(key: path(key), "must be an integer in \(range.lowerBound)…\(range.upperBound)")
        }
        return v
    }

    /// A `q`: an integer 1…100, or `"auto"` (`AutoQuality.unresolved`, SPEC §17), lower case only.
    mutating func quality(_ key: String) throws(ConfigurationError) -> Int? {
        guard let value = take(key) else { return nil }
        switch value {
        case .integer(let v) where (1...100).contains(v): return v
        case .string("auto"): return AutoQuality.unresolved
        default: throw ConfigurationError(key: path(key), "must be an integer in 1…100 or \"auto\"")
        }
    }

    mutating func seconds(_ key: String, _ range: ClosedRange<Double>) throws(ConfigurationError) -> Double? {
        guard let value = take(key) else { return nil }
        let v: Double
        switch value {
        case .integer(let i): v = Double(i)
        case .number(let d): v = d
        default: throw ConfigurationError(key: path(key), "must be a number of seconds")
        }
        guard range.contains(v) else {
            throw ConfigurationError(key: path(key), "must be in \(range.lowerBound)…\(range.upperBound) seconds")
        }
        return v
    }

    mutating func bool(_ key: String) throws(ConfigurationError) -> Bool? {
        guard let value = take(key) else { return nil }
        guard case .bool(let b) = value else { throw ConfigurationError(key: path(key), "must be true or false") }
        return b
    }

    mutating func string(_ key: String) throws(ConfigurationError) -> String? {
        guard let value = take(key) else { return nil }
        guard case .string(let s) = value else { throw ConfigurationError(key: path(key), "must be a string") }
        return s
    }

    /// A string or null; the outer optional tells whether the key was present.
    mutating func nullableString(_ key: String) throws(ConfigurationError) -> String?? {
        guard let value = take(key) else { return nil }
        switch value {
        case .null: return .some(nil)
        case .string(let s): return .some(s)
        default: throw ConfigurationError(key: path(key), "must be a string or null")
        }
    }

    mutating func strings(_ key: String) throws(ConfigurationError) -> [String]? {
        guard let value = take(key) else { return nil }
        guard case .array(let items) = value else {
            throw ConfigurationError(key: path(key), "must be an array of strings")
        }
        var out: [String] = []
        for item in items {
            guard case .string(let s) = item else {
                throw ConfigurationError(key: path(key), "must be an array of strings")
            }
            out.append(s)
        }
        return out
    }

    mutating func object(_ key: String) throws(ConfigurationError) -> ConfigReader? {
        guard let value = take(key) else { return nil }
        return try ConfigReader(value, path: path(key))
    }

    /// The keys left, for objects whose keys are names (presets).
    mutating func takeAll() -> [(key: String, value: JSONValue)] {
        defer { members = [] }
        return members
    }

    func finish() throws(ConfigurationError) {
        if let extra = members.first {
            throw ConfigurationError(key: path(extra.key), "unknown key")
        }
    }
}
