/// Where one HTTP/1.1 connection is (`ConnectionStateMachine.state`).
enum ConnectionState {
    /// A request from the moment the handler gets it until its response is written.
    struct Flight {
        var method: String
        var path: String
        /// What the client asked for; draining may still say close.
        var keepAlive: Bool
        /// HTTP/1.1: an interim `100 Continue` may precede the answer
        /// (never to HTTP/1.0, RFC 9110 § 15.2).
        var takesInterim: Bool
    }

    /// Between requests: waiting for the next head, or the rest of it.
    case reading
    /// The handler has the request; no timeout runs meanwhile.
    case handling(Flight)
    /// A response is being written: a request's, or (nil) the server's
    /// own: an error (`closeAfter`), a refused `Expect`, or `100 Continue`
    /// (the only one that keeps the connection: its request is still to come).
    case writing(Flight?, closeAfter: Bool)
    case closed
}
