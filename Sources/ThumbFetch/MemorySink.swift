import Synchronization

/// A body collected in memory, for tests, tools and the fuzz target: the
/// fetcher's limit (`FetchPolicy.maxBytes`) bounds it. The service never uses
/// one (it streams to disk, `BodySink`).
public final class MemorySink: BodySink {
    private let collected = Mutex<[UInt8]>([])

    public init() {}

    public func write(_ bytes: UnsafeRawBufferPointer) throws(BodySinkError) {
        collected.withLock { $0.append(contentsOf: bytes) }
    }

    /// Every byte written so far.
    public var bytes: [UInt8] { collected.withLock { $0 } }
}
