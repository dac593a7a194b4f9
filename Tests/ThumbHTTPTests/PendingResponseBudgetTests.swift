import Foundation
import Testing
@testable import ThumbHTTP

/// `http.maxPendingResponseBytes` (README § HTTP server): response bytes
/// queued for clients, across connections, stay within the budget; past it
/// responses wait and the connections stalled longest are closed first.
@Suite struct PendingResponseBudgetTests {
    @Test func chargesCreditsAndRemovalsKeepAnExactTotal() {
        var ledger = PendingResponseLedger(limit: 100)
        #expect(ledger.reserve(id: 1, bytes: 60, now: 0) == .write)
        #expect(ledger.reserve(id: 2, bytes: 40, now: 1) == .write, "exactly at the limit fits")
        #expect(ledger.written(id: 1, bytes: 25, now: 2).isEmpty && ledger.total == 75)
        #expect(ledger.written(id: 1, bytes: 500, now: 3).isEmpty && ledger.total == 40, "never credits more than charged")
        #expect(ledger.remove(id: 2, now: 4).isEmpty && ledger.total == 0)
        #expect(ledger.remove(id: 2, now: 4).isEmpty && ledger.remove(id: 9, now: 4).isEmpty && ledger.total == 0)
        #expect(ledger.peak == 100)
    }

    @Test func pastTheLimitAResponseWaitsAndTheStalestAreClosedForIt() {
        var ledger = PendingResponseLedger(limit: 100)
        #expect(ledger.reserve(id: 1, bytes: 30, now: 10) == .write)
        #expect(ledger.reserve(id: 2, bytes: 30, now: 20) == .write)
        #expect(ledger.reserve(id: 3, bytes: 30, now: 30) == .write)
        _ = ledger.written(id: 1, bytes: 1, now: 40)   // 1 made progress last: 2 is now the stalest
        #expect(ledger.reserve(id: 4, bytes: 40, now: 50) == .wait(evict: [2]), "89 - 30 + 40 fits")
        #expect(ledger.reserve(id: 5, bytes: 10, now: 51) == .wait(evict: [3]),
                "5 waits behind 4 (first come, first served); 2's bytes count as freed already")
        #expect(ledger.total == 89 && ledger.evictions == 2)
        #expect(ledger.remove(id: 2, now: 60) == [4], "2 closed: 4 fits now, 5 not yet")
        #expect(ledger.total == 99)
        #expect(ledger.remove(id: 3, now: 61) == [5])
        #expect(ledger.total == 29 + 40 + 10 && ledger.peak == 99)
    }

    @Test func aWaitingConnectionThatClosesIsForgotten() {
        var ledger = PendingResponseLedger(limit: 10)
        #expect(ledger.reserve(id: 1, bytes: 8, now: 0) == .write)
        #expect(ledger.reserve(id: 2, bytes: 8, now: 1) == .wait(evict: [1]))
        #expect(ledger.remove(id: 2, now: 2).isEmpty, "2 left before there was room")
        #expect(ledger.remove(id: 1, now: 3).isEmpty && ledger.total == 0)
        #expect(ledger.reserve(id: 3, bytes: 8, now: 4) == .write)
    }

    @Test func aResponseLargerThanTheBudgetGoesAlone() {
        var ledger = PendingResponseLedger(limit: 10)
        #expect(ledger.reserve(id: 1, bytes: 50, now: 0) == .write, "nothing else charged")
        #expect(ledger.reserve(id: 2, bytes: 1, now: 1) == .wait(evict: [1]))
        #expect(ledger.remove(id: 1, now: 2) == [2])
    }

    /// Eight clients with 4 KiB windows ask, 100 ms apart, for a 16 MiB answer
    /// and read nothing, against a 40 MiB budget; then a normal client asks
    /// for the same. The budget is never exceeded, the first to stall are the
    /// ones closed, the normal client gets its answer, and nothing stays charged.
    @Test func slowReadersCannotHoldMoreThanTheBudget() throws {
        let size = 16 << 20
        let body = [UInt8](repeating: 3, count: size)
        let budget = 40 << 20
        let server = HTTPServer(configuration: HTTPServerConfiguration(maxPendingResponseBytes: budget)) { request, responder in
            responder.respond(HTTPResponse(status: 200, body: request.path == "/small" ? [1] : body))
        }
        let port = try server.listen(.inet(host: "127.0.0.1", port: 0))
        var slow: [SlowReader] = []
        for _ in 0..<8 {
            slow.append(try SlowReader(port: port, request: "GET /big HTTP/1.1\r\nHost: h\r\n\r\n"))
            usleep(100_000)
        }
        #expect(waitUntil(seconds: 5) { server.statistics.requestsTotal == 8 })
        #expect(waitUntil(seconds: 5) { server.statistics.connectionsClosedForRoom >= 4 },
                "\(server.statistics.connectionsClosedForRoom) closed")
        #expect(server.statistics.pendingResponseBytes <= budget)

        let small = try TestClient(port: port)
        small.send("GET /small HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(small.readResponse()?.body == [1])
        let normal = try TestClient(port: port)
        normal.send("GET /big HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(normal.readResponse()?.body.count == size, "waits for room, then is served")

        let stats = server.statistics
        #expect(stats.pendingResponseBytesPeak <= budget, "peak \(stats.pendingResponseBytesPeak)")
        // Who was cut short: closed connections end before their full answer.
        let outcomes = slow.map { $0.readToEnd(seconds: 3) }
        let cut = outcomes.map { $0.ended && $0.bytes < size }
        #expect(cut.filter { $0 }.count == stats.connectionsClosedForRoom, "\(outcomes)")
        if let firstKept = cut.firstIndex(of: false) {
            #expect(!cut[firstKept...].contains(true), "the stalest (earliest) are closed first: \(cut)")
        }
        slow.removeAll()
        #expect(waitUntil(seconds: 5) { server.statistics.connectionsOpen == 2 && server.statistics.pendingResponseBytes == 0 },
                "only the two normal clients are left, nothing charged")
    }
}
