import Foundation
import ThumbCodec
import ThumbImaging
import ThumbRender

/// One job the daemon sends a worker, as one JSON frame (Isolation.md §
/// Protocol). Bulk bytes never travel in the frame: the original is the
/// daemon's read-only descriptor of the stored file (descriptor 0 of the
/// frame, at `originalOffset`), and a bitmap to encode a sealed memfd.
struct WorkerRequest: Codable, Sendable {
    enum Job: Codable, Sendable {
        case plan(variant: PreparedVariant, limits: PipelineLimits)
        case planAndRender(variant: PreparedVariant, limits: PipelineLimits, focus: FocalPoint?,
                           encoding: EncodingSpec, admittedBytes: Int)
        case render(plan: RenderPlan, factsSHA256: String?, encoding: EncodingSpec)
        case encode(width: Int, height: Int, encoding: EncodingSpec)
        case probe(limits: PipelineLimits)
        case facts(header: ImageHeader, sha256: String)
    }

    var job: Job
    var originalOffset: Int
    var originalLength: Int
    /// The time left of the job's `limits.maxRenderSeconds`, from when the
    /// worker reads the frame: a deadline crosses into the worker as a span
    /// and is set again on the worker's own clock.
    var time: Duration
    /// The memory the job was admitted with: freed heap the worker keeps beyond
    /// it (and beyond `SandboxEngine.keptHeapBytes`) goes back before the job.
    var admittedBytes = 0
    /// The threads the job's grid tiles may decode on (`JobBudget.tileThreads`).
    var tileThreads = 1
}

/// A worker's answer to one job, or its greeting. Results with bytes come as
/// sealed memfds beside the frame: a render's prepared bitmap (descriptor 0)
/// and its encoded rendition (1); an encode's rendition (0).
enum WorkerReply: Codable, Sendable {
    /// Sent once, when the worker has loaded its libraries and entered its
    /// sandbox: it takes jobs from now on.
    case ready
    case plan(RenderPlan)
    case header(ImageHeader)
    case facts(OriginalFacts)
    case encoded(format: OutputFormat, width: Int, height: Int)
    case rendered(bitmapWidth: Int, bitmapHeight: Int, facts: OriginalFacts?,
                  format: OutputFormat, width: Int, height: Int, frames: Int, fromAnimation: Bool,
                  autoQuality: AutoQuality.Choice?)
    case failed(RenderError)
}

/// Frames as JSON: small (a plan, a header, facts) and read by code that
/// must refuse anything malformed, which `JSONDecoder` does.
enum WorkerWire {
    /// A frame is a few hundred bytes (a plan, facts with their ThumbHash);
    /// anything past 64 KiB is refused, not read.
    static let maxFrameBytes = 64 << 10

    static func encode<T: Encodable>(_ value: T) throws(SandboxError) -> [UInt8] {
        do {
            return Array(try JSONEncoder().encode(value))
        } catch {
            throw .system("encoding a frame: \(error)", EINVAL)
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) throws(SandboxError) -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(bytes))
        } catch {
            throw .system("decoding a frame: \(error)", EINVAL)
        }
    }
}
