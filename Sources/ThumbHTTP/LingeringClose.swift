@preconcurrency import Dispatch
import Glibc

/// Closing a socket while the client is still sending (a `413` for a body too
/// large, a `400` mid-request) makes the kernel answer with RST, and an RST
/// destroys the response the client has not read yet. So, as nginx's
/// `lingering_close` does: send FIN, read and discard what still arrives for
/// a bounded time and byte count, then close. State is touched only on `queue`.
final class LingeringClose: @unchecked Sendable {
    static let seconds = 2.0
    static let maxBytes = 4 << 20

    private let fd: Int32
    private let source: DispatchSourceRead
    private var discarded = 0
    private var done = false

    static func start(fd: Int32, queue: DispatchQueue) {
        shutdown(fd, Int32(SHUT_WR))
        let linger = LingeringClose(fd: fd, queue: queue)
        queue.asyncAfter(deadline: .now() + seconds) { linger.finish() }
        linger.source.resume()
    }

    private init(fd: Int32, queue: DispatchQueue) {
        self.fd = fd
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [self] in drain() }
        source.setCancelHandler { Glibc.close(fd) }
    }

    private func drain() {
        var scratch = [UInt8](repeating: 0, count: 65536)
        while !done {
            let n = scratch.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                discarded += n
                if discarded > Self.maxBytes { return finish() }
                continue
            }
            if n < 0 && (errno == EAGAIN || errno == EINTR) { return }
            return finish()   // EOF or an error: the client is done
        }
    }

    private func finish() {
        guard !done else { return }
        done = true
        source.cancel()
    }
}
