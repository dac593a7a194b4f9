@preconcurrency import Dispatch

/// A serial I/O queue, the epoll instance its connections' sockets are
/// registered with, and the read buffer they share: they never read at the
/// same time, so one 64 KiB buffer per queue serves them all.
final class IOQueue: @unchecked Sendable {
    let queue: DispatchQueue
    let poller: Poller
    var readBuffer = [UInt8](repeating: 0, count: 65536)
    private static let key = DispatchSpecificKey<ObjectIdentifier>()

    init(label: String, lingering: Duration) {
        queue = DispatchQueue(label: label)
        poller = Poller(queue: queue, lingering: lingering)
        queue.setSpecific(key: Self.key, value: ObjectIdentifier(self))
    }

    /// True when the caller is already running on this queue.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.key) == ObjectIdentifier(self) }
}
