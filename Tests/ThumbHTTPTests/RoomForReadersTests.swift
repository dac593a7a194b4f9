import Foundation
import Glibc
import Synchronization
import Testing
import ThumbTestSupport
@testable import ThumbHTTP

private typealias Ledger = PendingResponseLedger<ManualClock>

/// Issue 19 (10), HTTPServer.md, Slow readers: only a connection that has
/// made no progress for a quarter of the send timeout may be closed to make
/// room in `http.maxPendingResponseBytes`. One whose client is reading,
/// however slowly, keeps its answer; new responses wait for room instead.
/// (Before, "least recent progress" had no threshold, and a client reading
/// steadily behind fast ones was closed mid-answer.)
@Suite struct RoomForReadersTests {
    @Test func onlyConnectionsStalledForTheThresholdAreClosedForRoom() {
        var ledger = Ledger(limit: 100, staleAfter: .seconds(5))
        #expect(ledger.reserve(id: 1, bytes: 60, now: at(0)) == .write)
        #expect(ledger.reserve(id: 2, bytes: 30, now: at(7)) == .write)
        #expect(ledger.written(id: 1, bytes: 10, now: at(8)).isEmpty, "1 reads")
        #expect(ledger.nextEviction == nil, "nothing waits")
        #expect(ledger.reserve(id: 3, bytes: 40, now: at(9)) == .wait(evict: []),
                "80 + 40 does not fit, but 1 progressed 1 s ago and 2 was charged 2 s ago")
        #expect(ledger.nextEviction == at(12), "2 will have stalled 5 s by then")
        #expect(ledger.written(id: 2, bytes: 5, now: at(11)).isEmpty, "2 starts reading")
        #expect(ledger.evictStale(now: at(12)).isEmpty, "nobody has stalled 5 s")
        #expect(ledger.nextEviction == at(13), "1's last progress was at 8")
        #expect(ledger.evictStale(now: at(13)) == [1], "1 stalled since 8: closed; its 50 leave room for 3")
        #expect(ledger.nextEviction == nil && ledger.evictions == 1)
        #expect(ledger.remove(id: 1, now: at(14)) == [3])
        #expect(ledger.total == 25 + 40)
    }

    @Test func theStalledAreClosedLongestStalledFirstAndOnlyAsManyAsNeeded() {
        var ledger = Ledger(limit: 100, staleAfter: .seconds(5))
        for id in 1...4 { #expect(ledger.reserve(id: id, bytes: 25, now: at(Double(id))) == .write) }
        #expect(ledger.written(id: 1, bytes: 0, now: at(20)).isEmpty, "progress of 0 bytes is none")
        #expect(ledger.written(id: 2, bytes: 1, now: at(20)).isEmpty)
        #expect(ledger.reserve(id: 5, bytes: 40, now: at(21)) == .wait(evict: [1, 3]),
                "99 + 40 - 100: 39 bytes; 1 and 3 stalled longest (2 took a byte at 20, 4 comes after 3)")
        #expect(ledger.nextEviction == nil, "enough is closing")
    }

    /// `http.sendTimeoutSeconds` 8 (stalled 2 s may be closed), a 16 MiB
    /// budget and 8 MiB answers: a client that reads its answer steadily at
    /// about 2 MiB/s while three others read nine of the same answer as fast
    /// as they can (one of theirs charged beside it, the others waiting: the
    /// line holds two) gets its whole answer; the fast ones wait for room in
    /// turn. Closing "the least recent progress" with no threshold closed
    /// the steady one here, whose last progress is a few milliseconds older
    /// than a fast one's.
    @Test func aClientReadingSteadilyIsNotClosedForFastOnes() throws {
        // 4 KiB short of 8 MiB: two answers, heads included, fit the budget.
        let size = (8 << 20) - 4096
        let body = [UInt8](repeating: 4, count: size)
        let configuration = HTTPServerConfiguration(sendTimeoutSeconds: 8, maxPendingResponseBytes: 16 << 20)
        let server = HTTPServer(configuration: configuration) { _, responder in
            responder.respond(HTTPResponse(status: 200, body: body))
        }
        let port = try server.listen(.inet(host: "127.0.0.1", port: 0))
        defer { server.stop() }

        let steady = Mutex<(bytes: Int, ended: Bool)>((0, false))
        let done = DispatchGroup()
        done.enter()
        Thread {
            defer { done.leave() }
            steady.withLock { $0 = Self.readSteadily(port: port, bytesPerSecond: 2 << 20, seconds: 20) }
        }.start()
        #expect(eventually { server.statistics.pendingResponseBytes > 0 }, "the steady reader's answer is charged")

        let fastBodies = Mutex<[Int]>([])
        for _ in 0..<3 {
            done.enter()
            Thread {
                defer { done.leave() }
                for _ in 0..<3 {
                    let received = (try? TestClient(port: port)).flatMap { client in
                        client.send("GET /big HTTP/1.1\r\nHost: h\r\n\r\n")
                        return client.readResponse()?.body.count
                    }
                    fastBodies.withLock { $0.append(received ?? -1) }
                }
            }.start()
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        let (received, ended) = steady.withLock { $0 }
        #expect(received >= size && ended, "the steady reader got \(received) of \(size) body bytes")
        #expect(fastBodies.withLock { $0 } == Array(repeating: size, count: 9))
        let stats = server.statistics
        #expect(stats.connectionsClosedForRoom == 0 && stats.responsesRefusedForRoom == 0 && stats.sendTimeouts == 0)
        #expect(stats.pendingResponseBytesPeak <= 16 << 20)
        #expect(stats.pendingResponseBytesWaitingPeak > 0, "fast answers did wait for room")
    }

    /// A client that reads nothing holds the whole budget; a second answer
    /// waits. The stalled one is closed once it has taken nothing for 2 s
    /// (a quarter of the 8 s send timeout): not at once, not by its send
    /// timeout.
    @Test func aStalledClientIsClosedForRoomOnceStalledLongEnough() throws {
        let size = 8 << 20
        let body = [UInt8](repeating: 5, count: size)
        let configuration = HTTPServerConfiguration(sendTimeoutSeconds: 8, maxPendingResponseBytes: size)
        let server = HTTPServer(configuration: configuration) { _, responder in
            responder.respond(HTTPResponse(status: 200, body: body))
        }
        let port = try server.listen(.inet(host: "127.0.0.1", port: 0))
        defer { server.stop() }
        let stalled = try SlowReader(port: port, request: "GET /big HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(eventually { server.statistics.pendingResponseBytes > 0 })
        let start = Date()
        let reader = try TestClient(port: port)
        reader.send("GET /big HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(reader.readResponse()?.body.count == size)
        let waited = Date().timeIntervalSince(start)
        #expect(waited > 1.5 && waited < 7, "waited \(waited) s: the stalled one keeps its room for 2 s")
        let stats = server.statistics
        #expect(stats.pendingResponseBytesWaitingPeak > size, "it waited for room (head and body)")
        #expect(stats.connectionsClosedForRoom == 1 && stats.sendTimeouts == 0)
        let (bytes, ended) = stalled.readToEnd()
        #expect(ended && bytes < size, "closed mid-answer: \(bytes) bytes")
    }

    /// One `GET /big` over a socket with a 64 KiB receive buffer, read at
    /// `bytesPerSecond` to the end (or for at most `seconds`): the body
    /// bytes received and whether the server ended the answer or the
    /// connection (an answer cut short ends too, with fewer bytes).
    private static func readSteadily(port: UInt16, bytesPerSecond: Int, seconds: Double) -> (Int, Bool) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var window: Int32 = 65536
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &window, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard Loopback.connect(fd, port: port) == 0 else { return (0, false) }
        let request = Array("GET /big HTTP/1.1\r\nHost: h\r\n\r\n".utf8)
        guard send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { return (0, false) }
        let start = Date()
        var received: [UInt8] = []
        var bodyStart: Int?
        var length = Int.max
        var chunk = [UInt8](repeating: 0, count: 32768)
        while Date().timeIntervalSince(start) < seconds {
            // The pace: never ahead of `bytesPerSecond`.
            let ahead = Double(received.count) / Double(bytesPerSecond) - Date().timeIntervalSince(start)
            if ahead > 0 { usleep(useconds_t(ahead * 1_000_000)) }
            let n = recv(fd, &chunk, chunk.count, 0)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return (max(0, received.count - (bodyStart ?? received.count)), true) }
            received += chunk[0..<n]
            if bodyStart == nil, let end = received.firstRange(of: Array("\r\n\r\n".utf8)) {
                bodyStart = end.upperBound
                let head = String(decoding: received[..<end.lowerBound], as: UTF8.self).lowercased()
                if let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }) {
                    length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? Int.max
                }
            }
            if let bodyStart, received.count - bodyStart >= length { return (received.count - bodyStart, true) }
        }
        return (max(0, received.count - (bodyStart ?? received.count)), false)
    }
}
