@preconcurrency import Dispatch

/// A serial I/O queue and the read buffer its connections share: they never
/// read at the same time, so one 64 KiB buffer per queue serves them all.
final class IOQueue: @unchecked Sendable {
    let queue: DispatchQueue
    var readBuffer = [UInt8](repeating: 0, count: 65536)
    private static let key = DispatchSpecificKey<ObjectIdentifier>()

    init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: Self.key, value: ObjectIdentifier(self))
    }

    /// True when the caller is already running on this queue.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.key) == ObjectIdentifier(self) }
}
