/// Why an image could not be probed, decoded or encoded.
public enum CodecError: Error, Equatable, Sendable {
    /// No bytes at all.
    case empty
    /// Not PNG or JPEG, or a variant thumbd does not decode (12-bit, lossless JPEG).
    case unsupportedFormat(String)
    /// Truncated or undecodable data.
    case corrupt(String)
    /// The header declares more pixels than allowed; nothing was decoded.
    case tooLarge(width: Int, height: Int)
    /// The file's structure exceeds a count no real image reaches (segments,
    /// chunks, items, references, tiles…; SourcesAndLimits.md § Structure
    /// limits), found by a structure walk before any codec library saw it.
    case tooComplex(String)
    /// An encoder failed (out of memory, or a bug).
    case encodeFailed(String)
    /// The `RenderDeadline` passed while decoding or encoding; the work was abandoned.
    case deadlineExceeded
}
