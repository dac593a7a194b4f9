/// A configuration that cannot be used: start-up stops with exit status 2.
public struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Dotted path of the offending key (`limits.maxSourceBytes`), or "" for the whole file.
    public let key: String
    public let message: String

    public init(key: String, _ message: String) {
        self.key = key
        self.message = message
    }

    public var description: String {
        key.isEmpty ? "config: \(message)" : "config: \(key): \(message)"
    }
}
