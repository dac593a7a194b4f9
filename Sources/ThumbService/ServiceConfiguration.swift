import ThumbFetch
import ThumbImaging
import ThumbRender

/// What the service core reads of thumbd's configuration (Configuration.md):
/// renders, caches, the disk store, limits, origins and output. The daemon's
/// own keys (`listen`, `http`, `security`, `log`) and the config file itself
/// belong to ThumbAPI's `DaemonConfiguration`, so the core never learns that
/// an HTTP server exists. Every field has the documented default.
public struct ServiceConfiguration: Equatable, Sendable {
    /// Render threads; 0 = one per CPU.
    public var workers = 0
    /// Renders allowed to wait; past that, `503 overloaded`.
    public var maxQueue = 256
    /// Bytes. 0 turns the memory cache off.
    public var memoryCacheBytes = 268_435_456
    public var diskStore = DiskStore()
    public var limits = Limits()
    public var origin = Origin()
    public var output = Output()
    public var info = Info()
    public var s3 = S3()

    public init() {}

    public struct DiskStore: Equatable, Sendable {
        /// nil: see `resolvedPath(environment:)`.
        public var path: String?
        /// Bytes, data and metadata together.
        public var maxBytes = 4_294_967_296
        /// Seconds before an original is revalidated with its origin.
        public var ttlSeconds = 86_400
        /// The fleet's shared originals store in the `s3` store (SeveralInstances.md); nil: none.
        public var shared: SharedStoreLocation?
    }

    public struct Limits: Equatable, Sendable {
        public var maxSourceBytes = 52_428_800
        public var maxSourcePixels = 50_000_000
        public var maxOutputDimension = 4096
        public var maxDecodeMemoryBytes = 536_870_912
        /// A render (decode, scale, encode) still running after this long is stopped.
        public var maxRenderSeconds: Double = 10
        /// Frames of an animation rendered; the rest are dropped (API.md § Animation).
        public var maxAnimationFrames = 200
        /// Canvas pixels times the frames rendered: more is `422 image_too_large`
        /// before any frame is decoded.
        public var maxAnimationPixels = 200_000_000
        /// JPEG XL sources decoded (API.md § Formats read): off by default,
        /// since libjxl 0.7 predates fixes for known CVEs (Isolation.md).
        public var jpegXLSources = false
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

    /// The S3-compatible store `s3://` sources are read from (S3Sources.md).
    public struct S3: Equatable, Sendable {
        /// `http(s)://HOST[:PORT]`; nil: no `s3://` sources.
        public var endpoint: String?
        /// The SigV4 signing region.
        public var region = "us-east-1"
        public var accessKeyId: String?
        /// `s3.secretAccessKey`, or the contents of `secretAccessKeyFile` (read
        /// at start and on every reload). Never printed.
        public var secretAccessKey: Secret?
        /// Where `secretAccessKey` was read from, if from a file.
        public var secretAccessKeyFile: String?
        /// `ENDPOINT/BUCKET/KEY` when true; `BUCKET.HOST/KEY` when false.
        public var pathStyle = true
        /// Buckets `s3://` sources may name; empty allows none.
        public var allowedBuckets: [String] = []
        /// How long the shared originals store may take (SeveralInstances.md);
        /// `s3://` sources keep `origin.timeoutSeconds`.
        public var timeoutSeconds: Double = 10

        /// What the fetcher needs, when the endpoint and credentials are usable.
        public var settings: S3Settings? {
            guard let endpoint, let parsed = try? S3Endpoint(endpoint), let accessKeyId, let secretAccessKey else {
                return nil
            }
            return S3Settings(endpoint: parsed, region: region, accessKeyId: accessKeyId,
                              secretAccessKey: secretAccessKey, pathStyle: pathStyle, allowedBuckets: allowedBuckets)
        }
    }

    public struct Info: Equatable, Sendable {
        /// Items a `POST /info` may carry (1…1000); more is a `400`.
        public var maxBatchItems = 100
    }

    public struct Output: Equatable, Sendable {
        /// `q` when a request and its preset give none: 1…100, or
        /// `AutoQuality.unresolved` for `"auto"` (SPEC §17).
        public var defaultQuality = 80
        /// The SSIMULACRA2 score `q=auto` searches for (30…95; reloadable).
        public var autoQualityTarget = AutoQuality.defaultTarget
        public var cacheMaxAgeSeconds = 86_400
        /// `stale-while-revalidate` of successful answers; 0 leaves it out.
        public var staleWhileRevalidateSeconds = 3600
        /// `max-age` of lasting error answers (404, 415, 422).
        public var errorMaxAgeSeconds = 10
        /// What `format=auto` may negotiate by `Accept`, in order of preference;
        /// empty: the PNG/JPEG rule alone, and no `Vary`. JPEG XL first: at
        /// equal score it takes about 0.8× WebP's bytes for the same CPU per
        /// miss (SPEC §8's rule; Configuration.md says why).
        public var autoFormats: [OutputFormat] = [.jxl, .webp]
        /// `WxH` boxes; empty means any box.
        public var allowedSizes: [Size] = []
        public var presets: [String: Preset] = [:]
    }

    /// A `WxH` box from `output.allowedSizes`.
    public struct Size: Hashable, Sendable, CustomStringConvertible {
        public var width: Int
        public var height: Int
        public var description: String { "\(width)x\(height)" }

        public init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }
    }

    /// A named set of defaults for `/thumbnail` (Configuration.md). No `fp`:
    /// a focal point belongs to one source, not to a family of requests.
    public struct Preset: Equatable, Sendable {
        public var width: Int?
        public var height: Int?
        public var fit: Fit?
        public var format: OutputFormat?
        /// 1…100, or `AutoQuality.unresolved` for `"auto"`.
        public var quality: Int?
        /// Yields to a request's `gravity`, and to its `fp`.
        public var gravity: Gravity?
        public var background: RGBAColor?
        /// `blur` in tenths of a CSS pixel (3…1000); the request's `dpr` multiplies it.
        public var blurTenths: Int?
        /// `sharpen` in tenths of a CSS pixel (3…100); the request's `dpr` multiplies it.
        public var sharpenTenths: Int?
        /// `animated`: false takes the first frame of an animated source (API.md § Animation).
        public var animated: Bool?

        public init(width: Int? = nil, height: Int? = nil, fit: Fit? = nil, format: OutputFormat? = nil,
                    quality: Int? = nil, gravity: Gravity? = nil, background: RGBAColor? = nil,
                    blurTenths: Int? = nil, sharpenTenths: Int? = nil, animated: Bool? = nil) {
            self.animated = animated
            self.width = width
            self.height = height
            self.fit = fit
            self.format = format
            self.quality = quality
            self.gravity = gravity
            self.background = background
            self.blurTenths = blurTenths
            self.sharpenTenths = sharpenTenths
        }
    }
}
