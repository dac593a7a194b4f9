@preconcurrency import Dispatch
import Foundation
import Glibc

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

/// One client connection, driven by Dispatch read/write sources on its own
/// serial queue. All mutable state is touched only on `queue`.
final class Connection: @unchecked Sendable {
    let id: Int
    let fd: Int32
    let io: IOQueue
    var queue: DispatchQueue { io.queue }
    private unowned let server: HTTPServer
    private var parser: RequestParser
    private var readSource: DispatchSourceRead?
    private var writeSource: DispatchSourceWrite?
    private var timer: DispatchSourceTimer?
    private var readSuspended = false
    private var writeSuspended = true
    private var inFlight: (responder: Responder, method: String, path: String, keepAlive: Bool, started: DispatchTime)?
    private var output: [UInt8] = []        // head of the response being written
    private var outputBody: [UInt8] = []    // its body, shared with the cache (no copy)
    private var written = 0
    private var closeAfterWrite = false
    private var closed = false
    private var timerIsForHead = true
    /// When the connection times out (nil: never, a request is in flight), and
    /// when its timer source is set to fire; see `arm(head:)`.
    private var deadline: UInt64?
    private var timerFiresAt: UInt64?
    var draining = false

    init(id: Int, fd: Int32, io: IOQueue, server: HTTPServer, maxHeaderBytes: Int) {
        self.id = id
        self.fd = fd
        self.io = io
        self.server = server
        parser = RequestParser(maxHeaderBytes: maxHeaderBytes)
    }

    func start() {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let read = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        read.setEventHandler { [self] in onReadable() }
        readSource = read
        let write = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        write.setEventHandler { [self] in flush() }
        writeSource = write
        arm(head: true)
        read.resume()
    }

    /// Idle connections close at once on drain; busy ones after their response.
    func beginDrain() {
        draining = true
        if inFlight == nil && !parser.hasPartialRequest { close() }
    }

    /// One timer per connection, moved lazily. Re-scheduling a Dispatch timer
    /// wakes Dispatch's manager thread (an eventfd write and a context switch),
    /// which cost more than a keep-alive request itself. So a later deadline
    /// only updates `deadline`; the timer fires at the earlier time, finds the
    /// deadline moved, and re-arms once. Only an earlier deadline re-schedules
    /// at once. Invariant: the timer fires no later than `deadline`.
    private func arm(head: Bool) {
        let seconds = head ? server.configuration.requestTimeoutSeconds : server.configuration.idleTimeoutSeconds
        timerIsForHead = head
        let due = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9)
        deadline = due
        if let firesAt = timerFiresAt, firesAt <= due { return }
        schedule(at: due)
    }

    private func schedule(at due: UInt64) {
        timerFiresAt = due
        if let timer {
            timer.schedule(deadline: DispatchTime(uptimeNanoseconds: due))
            return
        }
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: DispatchTime(uptimeNanoseconds: due))
        t.setEventHandler { [self] in onTimer() }
        timer = t
        t.resume()
    }

    /// No timeout while a request is in flight; the timer may still fire and finds nothing to do.
    private func disarm() {
        deadline = nil
    }

    private func onTimer() {
        timerFiresAt = nil
        guard let deadline else { return }
        if DispatchTime.now().uptimeNanoseconds < deadline {
            schedule(at: deadline)
            return
        }
        onTimeout()
    }

    private func onTimeout() {
        guard !closed, inFlight == nil else { return }
        if timerIsForHead {
            send(HTTPError.requestTimeout.response, method: "-", path: "-", keepAlive: false)
        } else {
            close()
        }
    }

    private func onReadable() {
        let n: Int
        do {
            guard case .processed(let count) = try io.readBuffer.withUnsafeMutableBytes({ buffer throws(SocketError) in
                try Socket.read(fd, into: buffer)
            }) else { return }
            n = count
        } catch {
            close()
            return
        }
        if n == 0 {
            close()
            return
        }
        let hadPartial = parser.hasPartialRequest
        parser.append(io.readBuffer[0..<n])
        // Later requests: the head timeout counts from their first byte (SPEC §6, 408).
        if !hadPartial && inFlight == nil && !timerIsForHead { arm(head: true) }
        // While a response is pending, keep reading (so a client that leaves is
        // noticed and its work cancelled) but buffer at most one more request's worth.
        if inFlight != nil && parser.bufferedBytes > server.configuration.maxHeaderBytes + 65536 { pauseReading() }
        processNext()
    }

    private func processNext() {
        guard !closed, inFlight == nil else { return }
        switch parser.next() {
        case nil:
            // Stop reading if the client sends more than a request head's worth
            // of bytes nobody asked for yet (back-pressure for pipelining).
            if parser.bufferedBytes > RequestParser.maxBodyBytes + 65536 { pauseReading() }
        case .error(let error)?:
            send(error.response, method: "-", path: "-", keepAlive: false)
        case .request(let request)?:
            disarm()
            let keepAlive = request.keepAlive && !draining
            let isHead = request.method == "HEAD"
            let responder = Responder { [weak self] response in
                guard let self else { return }
                // A handler answering at once (a cache hit) needs no queue hop.
                if self.io.isCurrent {
                    self.deliver(response, head: isHead)
                } else {
                    self.queue.async { self.deliver(response, head: isHead) }
                }
            }
            inFlight = (responder, request.method, request.path, keepAlive, .now())
            server.requestStarted()
            server.handler(request, responder)
        }
    }

    private func deliver(_ response: HTTPResponse, head: Bool) {
        guard let flight = inFlight, !closed else { return }
        var response = response
        if head { response.omitBody = true }
        send(response, method: flight.method, path: flight.path, keepAlive: flight.keepAlive && !draining)
    }

    private func send(_ response: HTTPResponse, method: String, path: String, keepAlive: Bool) {
        var head = "HTTP/1.1 \(response.status) \(HTTPResponse.reason(response.status))\r\nDate: \(HTTPDate.now())\r\nServer: thumbd\r\n"
        // A 304 describes a representation it does not carry: no Content-Length.
        if response.status != 304 { head += "Content-Length: \(response.body.count)\r\n" }
        head += keepAlive ? "Connection: keep-alive\r\n" : "Connection: close\r\n"
        for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        output = Array(head.utf8)
        outputBody = response.omitBody || response.status == 304 ? [] : response.body
        written = 0
        closeAfterWrite = !keepAlive
        let started = inFlight?.started ?? .now()
        server.responded(ResponseRecord(method: method, path: path, status: response.status, bodyBytes: outputBody.count,
                                        milliseconds: Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e6,
                                        cache: response.header("X-Cache")))
        flush()
    }

    /// Writes head and body with one writev per attempt; what the socket does
    /// not take now waits for the write source (no extra copy is buffered).
    private func flush() {
        guard !closed else { return }
        let total = output.count + outputBody.count
        while written < total {
            let n = output.withUnsafeBytes { head in
                outputBody.withUnsafeBytes { body in
                    var iov: [iovec] = []
                    if written < head.count {
                        iov.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: head.baseAddress! + written),
                                         iov_len: head.count - written))
                        if body.count > 0 { iov.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress!), iov_len: body.count)) }
                    } else {
                        let offset = written - head.count
                        iov.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress! + offset), iov_len: body.count - offset))
                    }
                    return writev(fd, iov, Int32(iov.count))
                }
            }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN {
                    if writeSuspended { writeSuspended = false; writeSource?.resume() }
                    return
                }
                close()
                return
            }
            written += n
        }
        if !writeSuspended { writeSuspended = true; writeSource?.suspend() }
        output = []
        outputBody = []
        let hadFlight = inFlight != nil
        inFlight = nil
        if hadFlight { server.requestFinished() }
        if closeAfterWrite || draining {
            close()
            return
        }
        resumeReading()
        if parser.hasPartialRequest { arm(head: true) } else { arm(head: false) }
        processNext()
    }

    private func pauseReading() {
        if !readSuspended { readSuspended = true; readSource?.suspend() }
    }

    private func resumeReading() {
        if readSuspended { readSuspended = false; readSource?.resume() }
    }

    func close() {
        guard !closed else { return }
        closed = true
        timer?.cancel()
        inFlight?.responder.cancel()
        if inFlight != nil { server.requestFinished() }
        inFlight = nil
        // A suspended source must be resumed before it is cancelled, or Dispatch traps.
        if readSuspended { readSource?.resume() }
        if writeSuspended { writeSource?.resume() }
        // The descriptor may only close once both sources have finished cancelling.
        let fd = self.fd
        var pending = 2
        let closeWhenBothCancelled = { pending -= 1; if pending == 0 { Glibc.close(fd) } }
        readSource?.setCancelHandler(handler: closeWhenBothCancelled)
        writeSource?.setCancelHandler(handler: closeWhenBothCancelled)
        readSource?.cancel()
        writeSource?.cancel()
        readSource = nil
        writeSource = nil
        output = []
        outputBody = []
        server.connectionClosed(self)
    }
}
