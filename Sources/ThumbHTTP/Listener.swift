/// A listening socket, in the accept queue's epoll set (the `Poller` owns
/// and closes its descriptor). Touched only on the accept queue.
final class Listener {
    let fd: Int32
    /// Its id in the accept queue's poller.
    let id: Int
    /// Accepts the connections waiting on this listener: runs for every
    /// readable edge. (Given the listener rather than capturing it, so the
    /// two do not keep each other alive.)
    let ready: (Listener) -> Void

    init(fd: Int32, id: Int, ready: @escaping (Listener) -> Void) {
        self.fd = fd
        self.id = id
        self.ready = ready
    }
}
