import ThumbHTTP
import ThumbSandbox
import ThumbService

/// thumbd's configuration file, whole (Configuration.md): the daemon's own keys
/// (`listen`, `http`, `security`, `log`) beside the service core's. Every field
/// has the documented default, so `DaemonConfiguration()` is the built-in
/// configuration. Only ThumbAPI and the `thumbd` executable read it; each
/// layer below gets its own part.
public struct DaemonConfiguration: Equatable, Sendable {
    /// `HOST:PORT`, `[IPv6]:PORT` or `unix:/path`.
    public var listen = "127.0.0.1:8080"
    /// Renders, caches, the disk store, limits, origins and output.
    public var service = ServiceConfiguration()
    /// The HTTP server's own limits type, so its defaults are written once.
    public var http = HTTPServerConfiguration()
    public var security = Security()
    public var sandbox = Sandbox()
    public var log = Log()

    public init() {}

    public struct Security: Equatable, Sendable {
        /// HMAC key of `/thumbnail` signatures; nil: requests need no signature.
        public var signingKey: String?
        /// Bearer token of the admin routes; nil: they are open (bind to loopback then).
        public var adminToken: String?
    }

    public struct Sandbox: Equatable, Sendable {
        /// `sandbox.user`: whom a root daemon's workers run as (Isolation.md § Workers).
        public var user: WorkerIdentity.User = .name("nobody")

        /// `user`'s uid and primary group, looked up now (at start, in
        /// check-config and on reload: the user database may have changed).
        public func identity() throws(ConfigurationError) -> WorkerIdentity {
            do {
                return try WorkerIdentity.resolve(user)
            } catch {
                throw ConfigurationError(key: "sandbox.user", error.description)
            }
        }
    }

    public struct Log: Equatable, Sendable {
        public var level: LogLevel = .info
        public var accessLog = true
    }
}

/// `log.level`.
public enum LogLevel: String, Sendable, Comparable, CaseIterable {
    case debug, info, warning, error

    private var rank: Int { LogLevel.allCases.firstIndex(of: self)! }
    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rank < b.rank }
}
