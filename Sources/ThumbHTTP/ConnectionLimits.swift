/// The server limits a connection obeys; `ConnectionStateMachine.update(_:)`
/// replaces them on reload. Outside the (generic) machine, so the server makes
/// one value for every connection whatever clock the machine runs on.
struct ConnectionLimits: Equatable {
    /// To receive a request head: from accept for the first request, from
    /// the first byte for later ones.
    var requestTimeout: Duration
    /// How long a kept-alive connection may wait for the next request.
    var idleTimeout: Duration
    var maxHeaderBytes: Int
    /// How long a response may go without the socket taking a byte of it.
    var sendTimeout: Duration

    init(requestTimeout: Duration, idleTimeout: Duration, maxHeaderBytes: Int, sendTimeout: Duration = .seconds(30)) {
        self.requestTimeout = requestTimeout
        self.idleTimeout = idleTimeout
        self.maxHeaderBytes = maxHeaderBytes
        self.sendTimeout = sendTimeout
    }

    init(_ configuration: HTTPServerConfiguration) {
        self.init(requestTimeout: .seconds(max(0, configuration.requestTimeoutSeconds)),
                  idleTimeout: .seconds(max(0, configuration.idleTimeoutSeconds)),
                  maxHeaderBytes: configuration.maxHeaderBytes,
                  sendTimeout: .seconds(max(0, configuration.sendTimeoutSeconds)))
    }
}
