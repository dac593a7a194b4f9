import Glibc

/// The write side of a connection: a response serialized into `head` and
/// `body`, charged to the pending-bytes budget, and written as the socket
/// takes it; and the probe of a client that ended its input. On the queue.
extension Connection {
    /// Serializes the response into `head` and `body` (shared with the
    /// handler's array, not copied).
    func serialize(_ outgoing: OutgoingResponse) {
        written = 0
        head.removeAll(keepingCapacity: true)
        if outgoing.isInterim {
            head.append(contentsOf: ResponseHead.continueBytes)
            body = []
        } else {
            ResponseHead.write(outgoing.response, keepAlive: outgoing.keepAlive, date: server.dates,
                               framing: outgoing.framing, into: &head)
            body = ResponseHead.body(of: outgoing.response)
            framing = outgoing.framing
        }
    }

    /// Frames the parts queued (and the body's end when `last`) as the next
    /// piece of a streamed answer, in `head`.
    func serializePart(last: Bool) {
        written = 0
        head.removeAll(keepingCapacity: true)
        body = []
        ResponseHead.part(queuedParts, framing: framing, last: last, into: &head)
        if queuedParts.count > 65536 { queuedParts = [] } else { queuedParts.removeAll(keepingCapacity: true) }
    }

    /// Charges the piece `serializePart` framed, part by part, to the
    /// pending-bytes budget; it waits for room rather than being refused. A
    /// piece of nothing (the end of an HTTP/1.0 stream) is written at once.
    func reservePart() {
        if head.isEmpty { return perform(machine.writeCompleted(now: Self.now())) }
        if machine.partRoomDecided(server.reserve(self, bytes: head.count, refusable: false)) {
            flush(mayBeWaiting: false)
        }
    }

    /// Asks the server's pending-bytes budget for room for the serialized
    /// response and does what the machine makes of the answer.
    func reserve(_ outgoing: OutgoingResponse) {
        switch machine.roomDecided(server.reserve(self, bytes: head.count + body.count), for: outgoing) {
        case .send(let record):
            server.responded(record)
            flush(mayBeWaiting: false)
        case .wait(let record):
            server.responded(record)
        case .sendRefusal(let refusal, let record):
            server.responded(record)
            serialize(refusal)
            flush(mayBeWaiting: false)
        case .none:
            break
        }
    }

    /// Writes head and body with one writev per attempt; what the socket does
    /// not take now waits for the next writable edge (no extra copy is buffered).
    /// `mayBeWaiting`: called for a writable edge, which may come while the
    /// response waits for room (the machine's say); the machine's own `.send`
    /// needs no asking.
    func flush(mayBeWaiting: Bool = true) {
        // A late write event after the response completed or the socket closed,
        // or a response still waiting for room.
        guard !head.isEmpty, !mayBeWaiting || machine.room != .awaiting else { return }
        var progressed = 0
        while written < head.count + body.count {
            let result: IOResult
            do {
                result = try writeSome()
            } catch {
                peerDone = true
                perform(machine.peerClosed())
                return
            }
            guard case .processed(let n) = result else {
                if progressed > 0 {
                    let actions = machine.writeProgressed(bytes: progressed, now: Self.now())
                    if actions.room == .credit { server.written(self, bytes: progressed) }
                    perform(actions)
                }
                return
            }
            written += n
            progressed += n
        }
        finishResponse()
        perform(machine.writeCompleted(now: Self.now()))
    }

    /// Sends the bare `100 Continue` that tells a client gone from one that
    /// only half-closed (`ConnectionStateMachine.inputEnded`): the first's
    /// kernel answers with a reset, which the next read reports. Written at
    /// once or not at all, outside `head`, which holds no response now.
    func probePeer() {
        guard head.isEmpty else { return }   // a response is going out: its writes will tell
        let bytes = ResponseHead.continueBytes
        let sent = bytes.withUnsafeBytes { raw in
            Socket.retryingOnInterrupt { send(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL)) }
        }
        if sent == bytes.count { return }
        if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }   // not reading: its answer's write will tell
        // Failed (the client is gone), or taken in part, which would spoil
        // the answer that follows: either way nobody can be answered.
        perform(machine.peerClosed())
    }

    /// Empties `head` (the next `flush` is a late event, not a response),
    /// keeping a usual head's capacity for the next response.
    private func finishResponse() {
        if head.capacity > 4096 { head = [] } else { head.removeAll(keepingCapacity: true) }
        body = []
    }

    /// One writev of what is left of the head and the body.
    private func writeSome() throws -> IOResult {
        try head.withUnsafeBytes { head in
            try body.withUnsafeBytes { body in
                try withUnsafeTemporaryAllocation(of: iovec.self, capacity: 2) { iov in
                    var count = 0
                    if written < head.count {
                        iov[0] = iovec(iov_base: UnsafeMutableRawPointer(mutating: head.baseAddress! + written),
                                       iov_len: head.count - written)
                        count = 1
                        if body.count > 0 {
                            iov[1] = iovec(iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress!), iov_len: body.count)
                            count = 2
                        }
                    } else {
                        let offset = written - head.count
                        iov[0] = iovec(iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress! + offset),
                                       iov_len: body.count - offset)
                        count = 1
                    }
                    return try Socket.writev(fd, iov.baseAddress!, Int32(count))
                }
            }
        }
    }
}
