import Foundation
import Synchronization
import Testing
import ThumbTestSupport
@testable import ThumbHTTP

/// The line of responses waiting for room in `http.maxPendingResponseBytes`
/// (HTTPServer.md, Slow readers), over real loopback sockets: it holds
/// at most the budget, what does not fit is refused with a small `503`, and a
/// small answer is not held behind large ones.
@Suite struct PendingResponseLineTests {
    /// Answers held by the test and released all at once, so that many
    /// finished responses reach the budget together.
    final class Gate: Sendable {
        private let held = Mutex<[(path: String, responder: Responder)]>([])
        func hold(_ path: String, _ responder: Responder) { held.withLock { $0.append((path, responder)) } }
        var count: Int { held.withLock { $0.count } }
        func release(_ path: String, body: [UInt8]) {
            let mine = held.withLock { h in h.filter { $0.path == path } }
            for r in mine { r.responder.respond(HTTPResponse(status: 200, body: body)) }
        }
    }

    /// Ten 4 KiB-window clients that read nothing ask for 16 MiB each against
    /// a 40 MiB budget (at most 2 charged and 2 waiting at once); their
    /// answers are released together, and 4 KiB ones for two reading clients
    /// at once and once every large one was decided. Both come in well under
    /// the 2 s send timeout, at most about the 0.5 s a stalled reader keeps
    /// its room (first come, first served kept the later one behind stalled
    /// 16 MiB answers for rounds of send timeouts); neither amount passes the
    /// budget; the answers with no room get `503` + close, as many as the
    /// server counts; and afterwards a reading client still gets 16 MiB.
    @Test func aSmallAnswerPassesLargeWaitingOnesAndTheLineStaysWithinTheBudget() throws {
        let size = 16 << 20, budget = 40 << 20, readers = 10
        let big = [UInt8](repeating: 5, count: size)
        let small = [UInt8](repeating: 6, count: 4096)
        let gate = Gate()
        let server = HTTPServer(configuration: HTTPServerConfiguration(sendTimeoutSeconds: 2, maxPendingResponseBytes: budget)) {
            request, responder in
            if request.path == "/later" { responder.respond(HTTPResponse(status: 200, body: big)) } else { gate.hold(request.path, responder) }
        }
        let port = try server.listen(.inet(host: "127.0.0.1", port: 0))
        defer { server.stop() }
        var slow: [SlowReader] = []
        for _ in 0..<readers {
            slow.append(try SlowReader(port: port, request: "GET /big HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"))
        }
        let first = try TestClient(port: port), second = try TestClient(port: port)
        first.send("GET /small HTTP/1.1\r\nHost: h\r\n\r\n")
        second.send("GET /small2 HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(eventually(5) { gate.count == readers + 2 })

        // One small answer races the large ones to the budget; the other
        // comes once they have settled (first come, first served had a line
        // of them by then, ahead of it).
        gate.release("/big", body: big)
        for (client, path, settled) in [(first, "/small", false), (second, "/small2", true)] {
            // Settled: every large answer was decided (written, waiting or refused).
            if settled { #expect(eventually(5) { server.statistics.requestsTotal == readers + 1 }) }
            let start = Date()
            gate.release(path, body: small)
            let answer = client.readResponse()
            let waited = Date().timeIntervalSince(start)
            #expect(answer?.status == 200 && answer?.body == small)
            // It may wait for the charged readers to stall 0.5 s and be closed.
            #expect(waited < 1.5, "\(path) took \(waited) s")
        }

        #expect(eventually(5) { server.statistics.pendingResponseBytesWaiting == 0 })
        let later = try TestClient(port: port)
        let laterStart = Date()
        later.send("GET /later HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(later.readResponse()?.body.count == size, "a large answer still finds room")
        #expect(Date().timeIntervalSince(laterStart) < 2.5, "room made by closing stalled readers, not by their send timeout")

        // Every slow reader ends: refused, closed for room, or by its send timeout.
        let outcomes = slow.map { reader in (reader.readToEnd(seconds: 6), String(decoding: reader.start, as: UTF8.self)) }
        #expect(outcomes.allSatisfy { $0.0.ended }, "\(outcomes.map(\.0))")
        let refused = outcomes.filter { $0.1.hasPrefix("HTTP/1.1 503 ") }
        for (_, text) in refused {
            // The body is the application's (ThumbAPI renders it as JSON, with Retry-After); this server's default is text.
            #expect(text.contains("\r\nConnection: close\r\n"), "\(text)")
            #expect(text.hasSuffix("overloaded: too many response bytes waiting for slow clients\n"), "\(text)")
        }
        let stats = server.statistics
        #expect(refused.count == stats.responsesRefusedForRoom && stats.responsesRefusedForRoom > 0,
                "\(refused.count) refusals seen, \(stats.responsesRefusedForRoom) counted")
        #expect(stats.byStatus[503] == stats.responsesRefusedForRoom)
        #expect(stats.pendingResponseBytesPeak <= budget && stats.pendingResponseBytesWaitingPeak <= budget,
                "charged peak \(stats.pendingResponseBytesPeak), waiting peak \(stats.pendingResponseBytesWaitingPeak)")
        #expect(stats.pendingResponseBytesWaitingPeak > 0, "some answers did wait")
        slow.removeAll()
        #expect(eventually(5) {
            let s = server.statistics
            return s.connectionsOpen == 3 && s.pendingResponseBytes == 0 && s.pendingResponseBytesWaiting == 0 && s.requestsActive == 0
        }, "only the three reading clients are left, nothing charged or waiting")
    }
}
