/// Where a download's body goes as it arrives. The fetcher keeps no copy of a
/// body: no buffer is ever sized by what an origin announces, and a download
/// that stalls before its last byte holds nothing in memory while it waits
/// (SourcesAndLimits.md § Downloads). The service streams into a file in the
/// disk store; tests and tools collect the bytes with `MemorySink`.
///
/// `write` runs on the fetcher's engine thread, which serves every download:
/// keep it short (a write to a file, a hash update), never wait there.
public protocol BodySink: AnyObject, Sendable {
    /// The next bytes of the 2xx body, in order (never a redirect's or an
    /// error's body). Throwing stops the download: it fails with
    /// `FetchError.storage`. The bytes are valid only during the call.
    func write(_ bytes: UnsafeRawBufferPointer) throws(BodySinkError)
}

/// Why a sink could not take a download's bytes (a full disk, a broken store).
public struct BodySinkError: Error, Equatable, Sendable {
    public let message: String

    public init(_ message: String) { self.message = message }
}
