import Glibc
import Synchronization

/// A descriptor this side owns: closed when the value goes away, unless taken
/// first. Received descriptors come wrapped in these so that one a caller
/// drops, or a frame abandoned on an error path, cannot leak (a memfd's memory
/// lives as long as any descriptor to it is open).
public final class OwnedFileDescriptor: Sendable {
    private let state: Mutex<Int32>

    /// Takes ownership of `fd`: it is closed with this value.
    public init(taking fd: Int32) {
        state = Mutex(fd)
    }

    /// The descriptor, still owned here (do not close it); nil once taken or closed.
    public var rawValue: Int32? {
        state.withLock { fd in fd >= 0 ? fd : nil }
    }

    /// Hands the descriptor to the caller, who closes it from now on; nil if
    /// it was already taken or closed.
    public func take() -> Int32? {
        state.withLock { fd in
            defer { fd = -1 }
            return fd >= 0 ? fd : nil
        }
    }

    /// Closes the descriptor now (again: nothing).
    public func close() {
        if let fd = take() { _ = Glibc.close(fd) }
    }

    deinit {
        close()
    }
}
