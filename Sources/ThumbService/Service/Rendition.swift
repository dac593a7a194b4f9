import ThumbImaging
import ThumbRender

/// Where a response's bytes came from (API.md § Output `X-Cache`).
public enum CacheOutcome: String, Sendable {
    /// No download and no decode: the rendition or its prepared bitmap was in memory.
    case memory
    /// Decoded from the original on disk.
    case disk
    /// Downloaded for this request.
    case origin
}

/// An encoded thumbnail with what its response headers need.
public struct Rendition: Sendable {
    public init(bytes: [UInt8], contentType: String, width: Int, height: Int, frames: Int = 1, etag: String) {
        self.bytes = bytes
        self.contentType = contentType
        self.width = width
        self.height = height
        self.frames = frames
        self.etag = etag
    }

    public let bytes: [UInt8]
    public let contentType: String
    public let width: Int
    public let height: Int
    /// Frames of an animated answer (`X-Image-Frames`); 1 for a still one.
    public var frames: Int = 1
    /// Strong, quoted; derived from the original's content hash and the variant,
    /// so it is stable across restarts.
    public let etag: String
    /// Made from an animated GIF or WebP (a still of its first frame, or
    /// its animation): a request whose `auto` keeps animations in WebP does
    /// not take a still one (ThumbnailRequest+Animation.swift).
    public var fromAnimatedSource = false
    /// The `q` the answer was encoded with (`X-Image-Quality`, SPEC §17):
    /// `q=auto`'s choice once resolved; nil for `png` and `rgba`.
    public var quality: Int?

    static func etag(originalSHA256: String, variant: ThumbnailVariant) -> String {
        let digest = Digest.sha256(Array("\(originalSHA256)|\(variant.canonicalKey)|r\(ThumbnailVariant.rendererVersion)".utf8))
        return "\"" + Digest.hex(Array(digest.prefix(16))) + "\""
    }
}

/// A thumbnail answer: the rendition and where it came from.
public struct ThumbnailResult: Sendable {
    public let rendition: Rendition
    public let cache: CacheOutcome
}

/// Keys of the one memory cache. Both carry the source URL so a purge or a
/// changed original can drop every variant of a source.
enum MemoryKey: Hashable, Sendable, HeapFootprint {
    case prepared(url: String, PreparedVariant)
    case rendition(url: String, ThumbnailVariant)
    /// The facts of `url`'s original with digest `sha256` (keyed by the URL
    /// too, so a purge drops them with the source's variants).
    case facts(url: String, sha256: String)
    /// `/info`'s serialized answer for `url` (dropped with the source's
    /// variants when its original changes or is purged).
    case info(url: String)
    /// `q=auto`'s results for `url`'s original (SPEC §17), by URL alone: a
    /// request resolves `q=auto` before it knows the original's digest.
    case autoQuality(url: String)

    var url: String {
        switch self {
        case .prepared(let url, _), .rendition(let url, _), .facts(let url, _), .info(let url),
             .autoQuality(let url): url
        }
    }

    /// The URL: each request parses its own copy (up to 2 KB, far more than
    /// a small rendition's bytes). The prepared bitmap and the rendition one
    /// request makes share that copy and both count it: the cost errs high,
    /// since either may be evicted first and then holds it alone.
    var heapBytes: Int {
        if case .facts(_, let sha) = self { return url.heapBytes + sha.heapBytes }
        return url.heapBytes
    }
}

/// Values of the memory cache: a prepared bitmap or an encoded rendition.
/// Their cost is every buffer they hold: the pixels (w·h·4) or encoded bytes,
/// and the strings beside them.
enum MemoryItem: Sendable, HeapFootprint {
    /// `fromAnimation`: the first frame of an animated source, which an
    /// animating variant cannot be encoded from (API.md § Animation).
    case prepared(Bitmap, originalSHA256: String, fromAnimation: Bool)
    case rendition(Rendition)
    case facts(OriginalFacts)
    case info(SourceInfo)
    /// The results of the original whose digest is `originalSHA256`.
    case autoQuality([AutoQuality.Choice], originalSHA256: String)

    var heapBytes: Int {
        switch self {
        case .autoQuality(let choices, let sha): Heap.array(choices) + sha.heapBytes
        case .facts(let f): f.sha256.heapBytes + f.thumbhash.heapBytes + f.averageColor.heapBytes + Heap.array(f.autoQuality)
        case .info(let info): info.heapBytes
        case .prepared(let bitmap, let sha, _): bitmap.pixels.heapBytes + sha.heapBytes
        // contentType is one of `OutputFormat.contentType`'s literals: on no heap.
        case .rendition(let r): r.bytes.heapBytes + r.etag.heapBytes
        }
    }
}

/// An original ready to decode. Its bytes stay in the file until a render
/// worker reads them (SourcesAndLimits.md § Downloads): originals waiting in the
/// render queue cost a descriptor each, not their size in memory.
struct Original: Sendable {
    let file: OriginalFile
    let metadata: OriginalMetadata
    /// `.disk` or `.origin`.
    let outcome: CacheOutcome
    /// Facts that came with it from the shared store, not yet checked
    /// against its own header (`ThumbnailService.checkSharedFacts`).
    var sharedFacts: OriginalFacts?
}
