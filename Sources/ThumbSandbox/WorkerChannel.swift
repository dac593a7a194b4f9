import CThumbSandbox
import Glibc

/// One end of the daemon–worker channel: a SOCK_SEQPACKET socket, so each
/// `send` arrives as exactly one `receive` (no length prefix to trust), with up
/// to four descriptors riding along (an original, a result memfd). The end is
/// closed with the value or by `close()`; call `close()` only when no other
/// call on this end is in flight (a worker's owner does one thing at a time).
public final class WorkerChannel: Sendable {
    /// Most descriptors one frame carries (`THUMBD_CHANNEL_MAX_FDS`).
    public static let maxDescriptors = Int(THUMBD_CHANNEL_MAX_FDS)

    /// The descriptor a spawned worker finds its end on (3).
    public static let workerDescriptor = Int32(THUMBD_WORKER_CHANNEL_FD)

    /// One received frame: its bytes and the descriptors that came with it,
    /// owned by the receiver.
    public struct Frame: Sendable {
        public let bytes: [UInt8]
        public let fds: [OwnedFileDescriptor]
    }

    private let descriptor: OwnedFileDescriptor

    /// Wraps an end this side owns: a worker wraps `workerDescriptor`.
    public init(taking fd: Int32) {
        descriptor = OwnedFileDescriptor(taking: fd)
    }

    /// Two connected ends, both close-on-exec: the daemon keeps one and
    /// spawns the worker with the other (then closes its copy of that one, or
    /// it never sees the worker's end close).
    public static func pair() throws(SandboxError) -> (WorkerChannel, WorkerChannel) {
        var fds: [Int32] = [-1, -1]
        let result = thumbd_channel_pair(&fds)
        guard result == 0 else { throw .system("socketpair", -result) }
        return (WorkerChannel(taking: fds[0]), WorkerChannel(taking: fds[1]))
    }

    /// The descriptor while open (for `WorkerProcess.spawn`); nil after `close()`.
    public var fileDescriptor: Int32? { descriptor.rawValue }

    /// Closes this end: the peer's next receive gives `.closed`.
    public func close() {
        descriptor.close()
    }

    /// Sends one frame (1 byte or more; a few KiB at most — bulk data goes in
    /// a memfd) with `fds` (up to `maxDescriptors`; the caller keeps its own,
    /// the peer gets duplicates). Blocks while the peer's queue is full.
    /// `.system("sendmsg", EPIPE)` when the peer is gone.
    public func send(_ frame: [UInt8], fds: [Int32] = []) throws(SandboxError) {
        guard let fd = descriptor.rawValue else { throw .system("sendmsg", EBADF) }
        let result = frame.withUnsafeBytes { bytes in
            fds.withUnsafeBufferPointer { attached in
                thumbd_channel_send(fd, bytes.baseAddress, bytes.count, attached.baseAddress, Int32(attached.count))
            }
        }
        guard result == 0 else { throw .system("sendmsg", -result) }
    }

    /// Waits up to `timeout` (nil: forever) for one frame of at most
    /// `maxBytes` bytes and `maxDescriptors` descriptors. Throws `.timedOut`,
    /// `.closed` when the peer closed its end, `.truncated` for a larger frame
    /// (whose descriptors are closed here; the next frame arrives whole).
    public func receive(timeout: Duration?, maxBytes: Int,
                        maxDescriptors: Int = WorkerChannel.maxDescriptors) throws(SandboxError) -> Frame {
        guard let fd = descriptor.rawValue else { throw .system("recvmsg", EBADF) }
        var received = [Int32](repeating: -1, count: WorkerChannel.maxDescriptors)
        var count: Int32 = 0
        let milliseconds = timeout.map(Self.milliseconds) ?? -1
        let allowed = Int32(min(max(0, maxDescriptors), WorkerChannel.maxDescriptors))
        var result = 0
        // Uninitialized and trimmed to the frame: a job's two frames each way must not
        // cost a zeroed buffer of the largest frame allowed (a megabyte was 8 % of a render).
        let bytes = [UInt8](unsafeUninitializedCapacity: max(0, maxBytes)) { buffer, initialized in
            result = received.withUnsafeMutableBufferPointer { fds in
                thumbd_channel_recv(fd, buffer.baseAddress, buffer.count, fds.baseAddress, allowed, &count, milliseconds)
            }
            initialized = max(0, result)
        }
        switch result {
        case 1...:
            let fds = received.prefix(Int(count)).map { OwnedFileDescriptor(taking: $0) }
            return Frame(bytes: bytes, fds: fds)
        case 0: throw .closed
        case -Int(ETIMEDOUT): throw .timedOut
        case -Int(EMSGSIZE): throw .truncated
        default: throw .system("recvmsg", Int32(-result))
        }
    }

    /// Whole milliseconds, rounded up so that a short positive timeout still
    /// waits; within 0...Int32.max.
    static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, seconds < Int64(Int32.max / 1000) else { return seconds < 0 ? 0 : Int32.max }
        let partial = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(min(Int64(Int32.max), seconds * 1000 + partial))
    }
}
