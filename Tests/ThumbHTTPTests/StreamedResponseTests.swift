import Foundation
import Synchronization
import Testing
import ThumbTestSupport
@testable import ThumbHTTP

private typealias Machine = ConnectionStateMachine<ManualClock>

/// Streamed responses (HTTPServer.md, Streamed responses): a head, then
/// parts as the application has them, each charged to the pending-bytes
/// budget on its own and credited as written, chunked for HTTP/1.1, bare and
/// ended by the close for HTTP/1.0; no send timeout while waiting for the
/// application; a client that stops reading is cut by the send timeout, one
/// that leaves cancels the request.
@Suite struct StreamedResponseTests {
    let clock = ManualClock()

    private static func machine() -> Machine {
        Machine(limits: .init(requestTimeout: .seconds(10), idleTimeout: .seconds(60), maxHeaderBytes: 16_384,
                              sendTimeout: .seconds(30)))
    }

    /// The machine's part: the head charged as a response, then each piece
    /// (the parts queued meanwhile) charged, waiting for room if need be,
    /// and released once written; no deadline between pieces; the request
    /// finishes with the last piece.
    @Test func eachPieceIsChargedOnItsOwnAndNothingTimesOutBetweenThem() throws {
        var m = Self.machine()
        _ = m.start(now: clock.now)
        _ = m.bytesReceived(bytes("POST /s HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"), now: clock.now)
        let head = try #require(m.responseReady(HTTPResponse(status: 200), now: clock.now, streamed: true).next.written)
        #expect(head.framing == .chunked && head.keepAlive)
        #expect(m.roomDecided(.write, for: head).isSend && m.room == .charged)
        let headOut = m.writeCompleted(now: clock.now)
        #expect(headOut.room == .release && !headOut.requestFinished && headOut.next.isNone, "the body goes on")
        #expect(m.room == .none && m.deadline == nil, "waiting for the application is not the client's delay")

        let first = m.partQueued(now: clock.now)
        guard case .writePart(let last) = first.next else { Issue.record("no piece: \(first.next)"); return }
        #expect(!last && m.deadline == clock.now.advanced(by: .seconds(30)), "a piece out runs the send timeout")
        #expect(m.partQueued(now: clock.now).next.isNone, "a part queued while one is out waits for the next piece")
        let roomNow = m.partRoomDecided(.wait(evict: []))
        #expect(!roomNow && m.room == .awaiting, "no room: it waits, never refused")
        #expect(m.admitted(now: clock.now).next.isSend && m.room == .charged)
        let firstOut = m.writeCompleted(now: clock.now)
        #expect(firstOut.room == .release && !firstOut.requestFinished)
        guard case .writePart(false) = firstOut.next else { Issue.record("the queued part: \(firstOut.next)"); return }
        let second = m.partRoomDecided(.write)
        #expect(second)
        _ = m.writeCompleted(now: clock.now)
        guard case .writePart(true) = m.streamEnded(now: clock.now).next else { Issue.record("no end"); return }
        let end = m.partRoomDecided(.write)
        #expect(end)
        let done = m.writeCompleted(now: clock.now)
        #expect(done.requestFinished && done.room == .release && m.stream == nil && m.state.isReading)
    }

    @Test func aClientThatEndsItsInputMidStreamIsTakenAsGone() throws {
        var m = Self.machine()
        _ = m.start(now: clock.now)
        _ = m.bytesReceived(bytes("POST /s HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"), now: clock.now)
        let head = try #require(m.responseReady(HTTPResponse(status: 200), now: clock.now, streamed: true).next.written)
        _ = m.roomDecided(.write, for: head)
        _ = m.writeCompleted(now: clock.now)
        #expect(m.inputEnded(now: clock.now).next.closed == true, "closed, its request cancelled")
    }

    /// On a real socket: the head says chunked (no Content-Length), each part
    /// arrives before the application has the next, the end closes the body,
    /// and the connection serves the next request.
    @Test func partsArriveAsTheyAreWrittenAndTheConnectionLivesOn() throws {
        let streams = Mutex<[ResponseStream]>([])
        let server = HTTPServer(configuration: HTTPServerConfiguration()) { request, responder in
            if request.path == "/plain" { return responder.respond(ok("plain")) }
            let stream = responder.stream(HTTPResponse(status: 200, headers: [("Content-Type", "text/plain")]))
            stream.write(Array("one\n".utf8))
            streams.withLock { $0.append(stream) }
        }
        let port = try server.listen(.inet(host: "127.0.0.1", port: 0))
        defer { server.stop() }
        let client = try TestClient(port: port)
        client.send("POST /s HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
        let head = try #require(client.readResponse(head: true))
        #expect(head.status == 200 && head.headers["transfer-encoding"] == "chunked" && head.headers["content-length"] == nil)
        #expect(client.readChunk() == Array("one\n".utf8), "before the application has the next part")
        let stream = try #require(streams.withLock { $0.first })
        #expect(server.statistics.requestsActive == 1)
        stream.write(Array("two\n".utf8))
        #expect(client.readChunk() == Array("two\n".utf8))
        stream.end()
        #expect(client.readChunk() == [], "the last chunk")
        stream.write(Array("late".utf8))
        client.send("GET /plain HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(client.readResponse()?.body == Array("plain".utf8), "kept alive, nothing stray between answers")
        #expect(eventually { server.statistics.requestsActive == 0 && server.statistics.pendingResponseBytes == 0 })
    }

    @Test func anHTTP10ClientGetsTheBodyBareUntilTheClose() throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration()) { _, responder in
            let stream = responder.stream(HTTPResponse(status: 200))
            stream.write(Array("a\n".utf8))
            stream.write(Array("b\n".utf8))
            stream.end()
        }
        let port = try server.listen(.inet(host: "127.0.0.1", port: 0))
        defer { server.stop() }
        let client = try TestClient(port: port)
        client.send("POST /s HTTP/1.0\r\nContent-Length: 0\r\n\r\n")
        let head = try #require(client.readResponse(head: true))
        #expect(head.headers["transfer-encoding"] == nil && head.headers["content-length"] == nil
                && head.headers["connection"] == "close")
        #expect(client.readToEnd() == Array("a\nb\n".utf8))
    }

    /// A dropped stream ends its body: the connection is not left waiting.
    @Test func aStreamDroppedUnendedEndsTheBody() throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration()) { _, responder in
            responder.stream(HTTPResponse(status: 200)).write(Array("x".utf8))
        }
        let port = try server.listen(.inet(host: "127.0.0.1", port: 0))
        defer { server.stop() }
        let client = try TestClient(port: port)
        client.send("POST /s HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
        _ = try #require(client.readResponse(head: true))
        #expect(client.readChunk() == Array("x".utf8))
        #expect(client.readChunk() == [])
    }

    /// A client that stops reading: each part is charged as it goes out (the
    /// budget never holds more than the piece out), and the send timeout
    /// closes the connection and cancels the request; the charge goes back.
    @Test func aClientThatStopsReadingIsCutByTheSendTimeout() throws {
        let part = [UInt8](repeating: 0x61, count: 256 << 10)
        let peak = Mutex(0)
        let stopped = Mutex(false)
        let configuration = HTTPServerConfiguration(sendTimeoutSeconds: 1, maxPendingResponseBytes: 4 << 20)
        let server = HTTPServer(configuration: configuration) { _, responder in
            let stream = responder.stream(HTTPResponse(status: 200))
            Thread {
                // Parts as fast as they are taken, with a few always queued.
                while !stream.isCancelled {
                    stream.write(part)
                    Thread.sleep(forTimeInterval: 0.01)
                }
                stopped.withLock { $0 = true }
            }.start()
        }
        let port = try server.listen(.inet(host: "127.0.0.1", port: 0))
        defer { server.stop() }
        let client = try TestClient(port: port, receiveBuffer: 4096)
        client.send("POST /s HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
        #expect(eventually(20) {
            peak.withLock { $0 = max($0, server.statistics.pendingResponseBytes) }
            return stopped.withLock { $0 }
        }, "the send timeout cut the stream and cancelled its request")
        #expect(server.statistics.sendTimeouts == 1)
        #expect(server.statistics.pendingResponseBytesPeak < 2 * (part.count + 64),
                "charged piece by piece: \(server.statistics.pendingResponseBytesPeak)")
        #expect(eventually { server.statistics.pendingResponseBytes == 0 && server.statistics.requestsActive == 0 })
    }

    /// A client that leaves mid-stream (closes its socket) cancels the
    /// request, while the application has nothing more to write.
    @Test func aClientThatLeavesCancelsTheRequest() throws {
        let stream = Mutex<ResponseStream?>(nil)
        let server = HTTPServer(configuration: HTTPServerConfiguration()) { _, responder in
            let s = responder.stream(HTTPResponse(status: 200))
            s.write(Array("first\n".utf8))
            stream.withLock { $0 = s }
        }
        let port = try server.listen(.inet(host: "127.0.0.1", port: 0))
        defer { server.stop() }
        do {
            let client = try TestClient(port: port)
            client.send("POST /s HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
            _ = try #require(client.readResponse(head: true))
            #expect(client.readChunk() == Array("first\n".utf8))
        }
        #expect(eventually { stream.withLock { $0?.isCancelled } == true }, "cancelled while idle between parts")
        #expect(eventually { server.statistics.requestsActive == 0 && server.statistics.connectionsOpen == 0 })
    }
}

private extension ConnectionState {
    var isReading: Bool { if case .reading = self { true } else { false } }
}
