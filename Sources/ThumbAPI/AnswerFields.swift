import ThumbHTTP
import ThumbService

/// The header fields of a thumbnail or `/info` answer (API.md § Output, §
/// /info), serialized once per answer and configuration: a memory hit sends
/// them as they are. `X-Cache` is not among them; it differs between answers
/// of one rendition.
struct AnswerFields: Sendable {
    /// The answer these fields describe.
    let etag: String
    /// 200: Content-Type, ETag, Cache-Control, Vary, and a thumbnail's X-Image-Width, X-Image-Height (X-Image-Quality when lossy).
    let ok: [UInt8]
    /// 304 carries no `X-Image-*` (they describe a body it does not have).
    let notModified: [UInt8]

    init(_ r: Rendition, cacheControl: String, varies: Bool) {
        self.init(contentType: r.contentType, etag: r.etag, cacheControl: cacheControl, varies: varies,
                  size: (r.width, r.height), frames: r.frames, quality: r.quality)
    }

    /// `/info`: JSON, never negotiated.
    init(info etag: String, cacheControl: String) {
        self.init(contentType: "application/json", etag: etag, cacheControl: cacheControl, varies: false,
                  size: nil, frames: 1, quality: nil)
    }

    private init(contentType: String, etag: String, cacheControl: String, varies: Bool, size: (Int, Int)?,
                 frames: Int, quality: Int?) {
        self.etag = etag
        var common: [UInt8] = []
        Self.append("Content-Type", contentType, to: &common)
        Self.append("ETag", etag, to: &common)
        Self.append("Cache-Control", cacheControl, to: &common)
        if varies { Self.append("Vary", "Accept", to: &common) }
        notModified = common
        if let (width, height) = size {
            Self.append("X-Image-Width", String(width), to: &common)
            Self.append("X-Image-Height", String(height), to: &common)
            // Only an animated answer names its frames (API.md § Animation).
            if frames > 1 { Self.append("X-Image-Frames", String(frames), to: &common) }
            // The q used, `q=auto`'s choice included (SPEC §17); none for png and rgba.
            if let quality { Self.append("X-Image-Quality", String(quality), to: &common) }
        }
        ok = common
    }

    /// The bytes these fields hold, for the table that keeps them (`HitShortcuts`).
    var heapBytes: Int { etag.heapBytes + ok.heapBytes + notModified.heapBytes }

    /// The answer to a request with these fields: 304 when `ifNoneMatch`
    /// matches, else 200 with the rendition's bytes.
    func response(_ r: Rendition, cache: CacheOutcome, ifNoneMatch: String?) -> HTTPResponse {
        response(body: r.bytes, cache: cache, ifNoneMatch: ifNoneMatch)
    }

    /// 304 when `ifNoneMatch` matches, else 200 with `body`.
    func response(body: [UInt8], cache: CacheOutcome, ifNoneMatch: String?) -> HTTPResponse {
        let tag = switch cache {
        case .memory: Self.memoryTag
        case .disk: Self.diskTag
        case .origin: Self.originTag
        }
        if let ifNoneMatch, ServiceHandler.matches(ifNoneMatch, etag) {
            var notModified = HTTPResponse(status: 304, headers: tag)
            notModified.omitBody = true
            notModified.preparedFields = self.notModified
            return notModified
        }
        var response = HTTPResponse(status: 200, headers: tag, body: body)
        response.preparedFields = ok
        return response
    }

    /// One `X-Cache` field array per outcome, shared by every answer.
    private static let memoryTag = [(name: "X-Cache", value: CacheOutcome.memory.rawValue)]
    private static let diskTag = [(name: "X-Cache", value: CacheOutcome.disk.rawValue)]
    private static let originTag = [(name: "X-Cache", value: CacheOutcome.origin.rawValue)]

    private static func append(_ name: String, _ value: String, to out: inout [UInt8]) {
        out.append(contentsOf: name.utf8)
        out.append(contentsOf: ": ".utf8)
        out.append(contentsOf: value.utf8)
        out.append(contentsOf: "\r\n".utf8)
    }
}
