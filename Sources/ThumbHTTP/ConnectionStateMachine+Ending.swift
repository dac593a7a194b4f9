/// How a connection ends: a graceful drain, the client's end of stream,
/// the client gone, or the server giving up. Each closes the connection now
/// or once what was fully received is answered.
extension ConnectionStateMachine {
    /// Graceful drain (ServiceLife.md): an idle connection closes at once; a busy
    /// one (a request in flight, or part of one received) after its response.
    /// `received`: what the socket held when the drain began, not yet passed
    /// in; a request in it was sent before the drain, so it is answered
    /// (`Connection: close`) rather than dropped with an idle connection.
    mutating func drain<Bytes: Collection<UInt8>>(received: Bytes, now: Instant) -> Actions {
        if case .closed = state { return Actions() }
        draining = true
        var actions = received.isEmpty ? Actions() : bytesReceived(received, now: now)
        if case .reading = state, !hasPartialRequest { close(&actions) }
        return actions
    }

    /// The drain, with nothing read from the socket.
    mutating func drain() -> Actions {
        if case .closed = state { return Actions() }
        draining = true
        var actions = Actions()
        if case .reading = state, !hasPartialRequest { close(&actions) }
        return actions
    }


    /// The client sent end of stream. It may have shut down only its
    /// sending side and still wait for the answer (RFC 9112 § 9.6 lets it),
    /// so what it asked in full is answered and the connection then closes
    /// (HTTPServer.md § Closing a connection); with nothing complete to
    /// answer it closes now. End of stream alone cannot tell such a client
    /// from one that closed altogether and whose request should be
    /// cancelled: for an HTTP/1.1 request still with the handler, the
    /// driver sends a bare `100 Continue` (`.probePeer`), which the first
    /// ignores (RFC 9110 § 15.2) and the second's kernel answers with a
    /// reset, seen as `peerClosed`.
    mutating func inputEnded(now: Instant) -> Actions {
        if receivedEndOfStream { return Actions() }
        receivedEndOfStream = true
        var actions = Actions()
        switch state {
        case .writing where stream != nil:
            // Nothing can probe a client in the middle of a streamed body (a
            // bare `100 Continue` would corrupt it), and one that streams for
            // long has no reason to half-close: its end of stream is taken as
            // its going, so the work it asked for stops (HTTPServer.md,
            // Streamed responses).
            close(&actions)
        case .closed, .writing:
            // A response going out ends the connection after it unless a
            // request already here follows (`writeCompleted`).
            break
        case .reading:
            close(&actions)   // nothing complete to answer; a partial request never will be
        case .handling(let flight):
            if flight.takesInterim { actions.next = .probePeer }
        }
        return actions
    }

    /// The client left: a read or write error (a reset).
    mutating func peerClosed() -> Actions {
        var actions = Actions()
        close(&actions)
        return actions
    }

    /// The server gives up on the connection (the drain deadline passed).
    mutating func abort() -> Actions {
        peerClosed()
    }
}
