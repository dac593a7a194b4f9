import Glibc
import ThumbClock

/// A socket the server is done with but does not close yet. Closing while
/// the client is still sending (a `413` for a body too large, a `400`
/// mid-request, the rest of a pipeline) makes the kernel answer with RST,
/// and an RST destroys the response the client has not read yet. So, as
/// nginx's `lingering_close` does: send FIN, read and discard what still
/// arrives, for at most `seconds` and `maxBytes`, then close.
///
/// It stays in its I/O queue's epoll set under the connection's id (the
/// `Poller` drives it and alone closes it): a Dispatch source per lingering
/// socket crashed libdispatch under churn ("Source finalized twice"), its
/// hang-up unregistering a source whose descriptor number was already back
/// in use (HTTPServer.md § Closing a connection). Touched only on the queue.
final class LingeringClose {
    /// The most a lingering close lasts (the server's; tests may choose
    /// another); the poller's sweep may end it up to `Poller.lingerSweep`
    /// earlier.
    static let seconds = Duration.seconds(2)
    /// Bytes read and discarded at most; past them the client is not
    /// finishing a request but sending on, and the socket closes.
    static let maxBytes = 4 << 20

    let fd: Int32
    let deadline: MonotonicClock.Instant
    private var discarded = 0

    init(fd: Int32, deadline: MonotonicClock.Instant) {
        self.fd = fd
        self.deadline = deadline
    }

    /// Reads and discards until the socket is empty (false: wait for the
    /// next readable edge) or the client is done: end of stream, an error,
    /// or over `maxBytes` (true: close now).
    func drain(_ scratch: UnsafeMutableRawBufferPointer) -> Bool {
        while true {
            let result: IOResult
            do {
                result = try Socket.read(fd, into: scratch)
            } catch {
                return true   // reset or failed: nothing more will come
            }
            switch result {
            case .wouldBlock: return false
            case .processed(0): return true   // the client closed its side too
            case .processed(let n):
                discarded += n
                if discarded > Self.maxBytes { return true }
            }
        }
    }
}
