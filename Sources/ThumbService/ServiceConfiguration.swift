import ThumbHTTP
import ThumbImaging

/// thumbd's configuration (Configuration.md). Every field has the documented default,
/// so `ServiceConfiguration()` is the built-in configuration.
public struct ServiceConfiguration: Equatable, Sendable {
    /// `HOST:PORT`, `[IPv6]:PORT` or `unix:/path`.
    public var listen = "127.0.0.1:8080"
    /// Render threads; 0 = one per CPU.
    public var workers = 0
    /// Renders allowed to wait; past that, `503 overloaded`.
    public var maxQueue = 256
    /// Bytes. 0 turns the memory cache off.
    public var memoryCacheBytes = 268_435_456
    public var diskStore = DiskStore()
    public var limits = Limits()
    public var origin = Origin()
    public var http = HTTP()
    public var output = Output()
    public var security = Security()
    public var log = Log()

    public init() {}

    public struct DiskStore: Equatable, Sendable {
        /// nil: see `resolvedPath(environment:)`.
        public var path: String?
        /// Bytes, data and metadata together.
        public var maxBytes = 4_294_967_296
        /// Seconds before an original is revalidated with its origin.
        public var ttlSeconds = 86_400
    }

    public struct Limits: Equatable, Sendable {
        public var maxSourceBytes = 52_428_800
        public var maxSourcePixels = 50_000_000
        public var maxOutputDimension = 4096
        public var maxDecodeMemoryBytes = 536_870_912
        /// A render (decode, scale, encode) still running after this long is stopped.
        public var maxRenderSeconds: Double = 10
    }

    public struct Origin: Equatable, Sendable {
        public var timeoutSeconds: Double = 10
        public var connectTimeoutSeconds: Double = 3
        public var maxRedirects = 3
        /// Exact host names or `*.example.com` (subdomains of any depth).
        public var allowedHosts: [String] = []
        public var allowPrivateNetworks = false
        public var negativeCacheSeconds: Double = 30
        /// PEM bundle of trusted CAs for `https` origins; nil uses the system store.
        public var caFile: String?
        /// Downloads running at once (1…1024); more wait their turn.
        public var maxConcurrentFetches = 64
    }

    /// The HTTP server's own limits type, so its defaults are written once.
    public typealias HTTP = HTTPServerConfiguration

    public struct Output: Equatable, Sendable {
        public var defaultQuality = 82
        public var cacheMaxAgeSeconds = 86_400
        /// `stale-while-revalidate` of successful answers; 0 leaves it out.
        public var staleWhileRevalidateSeconds = 3600
        /// `max-age` of lasting error answers (404, 415, 422).
        public var errorMaxAgeSeconds = 10
        /// What `format=auto` may negotiate by `Accept`, in order of preference;
        /// empty: the PNG/JPEG rule alone, and no `Vary`.
        public var autoFormats: [OutputFormat] = [.webp]
        /// `WxH` boxes; empty means any box.
        public var allowedSizes: [Size] = []
        public var presets: [String: Preset] = [:]
    }

    public struct Security: Equatable, Sendable {
        public var signingKey: String?
        public var adminToken: String?
    }

    public struct Log: Equatable, Sendable {
        public var level: LogLevel = .info
        public var accessLog = true
    }

    /// A `WxH` box from `output.allowedSizes`.
    public struct Size: Hashable, Sendable, CustomStringConvertible {
        public var width: Int
        public var height: Int
        public var description: String { "\(width)x\(height)" }
    }

    /// A named set of defaults for `/thumbnail` (Configuration.md).
    public struct Preset: Equatable, Sendable {
        public var width: Int?
        public var height: Int?
        public var fit: Fit?
        public var format: OutputFormat?
        public var quality: Int?
    }
}

/// `log.level`.
public enum LogLevel: String, Sendable, Comparable, CaseIterable {
    case debug, info, warning, error

    private var rank: Int { LogLevel.allCases.firstIndex(of: self)! }
    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rank < b.rank }
}
