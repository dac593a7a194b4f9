import Foundation
import Testing
import ThumbTestSupport
@testable import ThumbHTTP

private typealias Ledger = PendingResponseLedger<ManualClock>

/// `http.maxPendingResponseBytes` (HTTPServer.md, Slow readers):
/// response bytes queued for clients, across connections, stay within the
/// budget; past it responses wait (as many bytes again at most, else `503`),
/// smaller ones passing larger ones only into room those are not promised,
/// and the connections stalled longest (for a second at least, here) are
/// closed first. RoomForReadersTests has the staleness rule itself.
@Suite struct PendingResponseBudgetTests {
    @Test func chargesCreditsAndRemovalsKeepAnExactTotal() {
        var ledger = Ledger(limit: 100, staleAfter: .seconds(1))
        #expect(ledger.reserve(id: 1, bytes: 60, now: at(0)) == .write)
        #expect(ledger.reserve(id: 2, bytes: 40, now: at(1)) == .write, "exactly at the limit fits")
        #expect(ledger.written(id: 1, bytes: 25, now: at(2)).isEmpty && ledger.total == 75)
        #expect(ledger.written(id: 1, bytes: 500, now: at(3)).isEmpty && ledger.total == 40, "never credits more than charged")
        #expect(ledger.remove(id: 2, now: at(4)).isEmpty && ledger.total == 0)
        #expect(ledger.remove(id: 2, now: at(4)).isEmpty && ledger.remove(id: 9, now: at(4)).isEmpty && ledger.total == 0)
        #expect(ledger.peak == 100)
    }

    @Test func pastTheLimitAResponseWaitsAndTheStalestAreClosedForIt() {
        var ledger = Ledger(limit: 100, staleAfter: .seconds(1))
        #expect(ledger.reserve(id: 1, bytes: 30, now: at(10)) == .write)
        #expect(ledger.reserve(id: 2, bytes: 30, now: at(20)) == .write)
        #expect(ledger.reserve(id: 3, bytes: 30, now: at(30)) == .write)
        _ = ledger.written(id: 1, bytes: 1, now: at(40))   // 1 made progress last: 2 is now the stalest
        #expect(ledger.reserve(id: 4, bytes: 40, now: at(50)) == .wait(evict: [2]), "89 - 30 + 40 fits")
        #expect(ledger.reserve(id: 5, bytes: 10, now: at(51)) == .wait(evict: [3]),
                "5 fits now (99) but would take room promised to 4 (89 - 30 + 40 + 10 > 100); 2's bytes count as freed already")
        #expect(ledger.total == 89 && ledger.evictions == 2)
        #expect(ledger.remove(id: 2, now: at(60)) == [4], "2 closed: 4 fits now, 5 not yet")
        #expect(ledger.total == 99)
        #expect(ledger.remove(id: 3, now: at(61)) == [5])
        #expect(ledger.total == 29 + 40 + 10 && ledger.peak == 99)
    }

    @Test func aWaitingConnectionThatClosesIsForgotten() {
        var ledger = Ledger(limit: 10, staleAfter: .seconds(1))
        #expect(ledger.reserve(id: 1, bytes: 8, now: at(0)) == .write)
        #expect(ledger.reserve(id: 2, bytes: 8, now: at(1)) == .wait(evict: [1]))
        #expect(ledger.remove(id: 2, now: at(2)).isEmpty, "2 left before there was room")
        #expect(ledger.remove(id: 1, now: at(3)).isEmpty && ledger.total == 0)
        #expect(ledger.reserve(id: 3, bytes: 8, now: at(4)) == .write)
    }

    @Test func aResponseLargerThanTheBudgetGoesAlone() {
        var ledger = Ledger(limit: 10, staleAfter: .seconds(1))
        #expect(ledger.reserve(id: 1, bytes: 50, now: at(0)) == .write, "nothing else charged")
        #expect(ledger.reserve(id: 2, bytes: 1, now: at(1)) == .wait(evict: [1]))
        #expect(ledger.remove(id: 1, now: at(2)) == [2])
    }

    @Test func aSmallerResponsePassesALargerOneIntoRoomItIsNotPromised() {
        var ledger = Ledger(limit: 100, staleAfter: .seconds(1))
        #expect(ledger.reserve(id: 1, bytes: 70, now: at(0)) == .write)
        #expect(ledger.reserve(id: 2, bytes: 50, now: at(1)) == .wait(evict: [1]))
        #expect(ledger.reserve(id: 3, bytes: 20, now: at(2)) == .write,
                "fits now (90), and once 1 is gone 2 still fits beside it (50 + 20)")
        #expect(ledger.reserve(id: 4, bytes: 15, now: at(3)) == .wait(evict: []), "90 + 15 does not fit now")
        #expect(ledger.total == 90 && ledger.waitingTotal == 65)
        #expect(ledger.written(id: 3, bytes: 10, now: at(4)) == [4],
                "80 + 15 fits: 4 passes 2 (80 + 50 does not), and 70 - 70 + 50 + 15 leaves 2 its room")
        #expect(ledger.waitingTotal == 50)
        #expect(ledger.remove(id: 1, now: at(5)) == [2], "the connection closed for 2 is gone: 2 goes at once")
        #expect(ledger.total == 10 + 15 + 50 && ledger.waitingTotal == 0 && ledger.peak == 95)
    }

    /// A stream of small answers on fast connections while a large one
    /// waits: none of them delays it past the moment the connections closed
    /// for it are gone, and neither amount ever passes the limit.
    @Test func aLargeResponseIsNotStarvedBySmallOnesPassingIt() {
        var ledger = Ledger(limit: 100, staleAfter: .seconds(1))
        for id in 1...3 { #expect(ledger.reserve(id: id, bytes: 30, now: at(Double(id))) == .write) }
        #expect(ledger.reserve(id: 10, bytes: 60, now: at(10)) == .wait(evict: [1, 2]), "the two stalest make room")
        var closing = [2, 1]
        var largeAdmittedAt: Int?
        var fast: [Int] = []   // small answers charged; their clients take them by the next step
        var served = 0
        for step in 0..<40 {
            let now = at(Double(100 + step))
            var admitted: [Int] = []
            for id in fast { admitted += ledger.remove(id: id, now: now) }
            fast = []
            switch ledger.reserve(id: 1000 + step, bytes: 5, now: now) {
            case .write: fast.append(1000 + step); served += 1
            case .wait(let evict): #expect(evict.isEmpty, "room was made already, step \(step)")
            case .refuse: Issue.record("refused at step \(step)")
            }
            // The closed connections go one by one, slowly.
            if step % 10 == 9, let id = closing.popLast() { admitted += ledger.remove(id: id, now: now) }
            for id in admitted {
                if id == 10 { largeAdmittedAt = step } else { fast.append(id); served += 1 }
            }
            #expect(ledger.total <= 100 && ledger.waitingTotal <= 100, "step \(step)")
        }
        #expect(largeAdmittedAt == 19, "charged as the second closed connection goes: \(String(describing: largeAdmittedAt))")
        #expect(served == 40 && ledger.evictions == 2, "every small answer passed meanwhile: \(served)")
    }

    @Test func pastTheLimitTwiceAResponseIsRefusedAndNothingIsKept() {
        var ledger = Ledger(limit: 100, staleAfter: .seconds(1))
        #expect(ledger.reserve(id: 1, bytes: 60, now: at(0)) == .write)
        #expect(ledger.reserve(id: 2, bytes: 50, now: at(1)) == .wait(evict: [1]))
        #expect(ledger.reserve(id: 3, bytes: 50, now: at(2)) == .wait(evict: []), "the line holds exactly the limit")
        #expect(ledger.reserve(id: 4, bytes: 1, now: at(3)) == .refuse, "fits now, but only into room promised to 2 and 3")
        #expect(ledger.total == 60 && ledger.waitingTotal == 100 && ledger.waitingPeak == 100 && ledger.refusals == 1)
        #expect(ledger.remove(id: 4, now: at(4)).isEmpty && ledger.waitingTotal == 100, "a refused response was never kept")
        #expect(ledger.remove(id: 1, now: at(5)) == [2, 3])
        #expect(ledger.total == 100 && ledger.waitingTotal == 0)
    }

    @Test func aResponseLargerThanTheBudgetWaitsOnlyAlone() {
        var ledger = Ledger(limit: 10, staleAfter: .seconds(1))
        #expect(ledger.reserve(id: 1, bytes: 8, now: at(0)) == .write)
        #expect(ledger.reserve(id: 2, bytes: 50, now: at(1)) == .wait(evict: [1]), "alone in line")
        #expect(ledger.reserve(id: 3, bytes: 1, now: at(2)) == .refuse, "behind it the line is full")
        #expect(ledger.reserve(id: 4, bytes: 60, now: at(3)) == .refuse)
        #expect(ledger.remove(id: 2, now: at(4)).isEmpty && ledger.waitingTotal == 0, "2 left while waiting")
        #expect(ledger.reserve(id: 5, bytes: 5, now: at(5)) == .wait(evict: []), "8 + 5 > 10; 1 is closing already")
        #expect(ledger.remove(id: 1, now: at(6)) == [5])
    }

    /// Eight clients with 4 KiB windows ask, 100 ms apart, for a 16 MiB answer
    /// and read nothing, against a 40 MiB budget and an 8 s send timeout (a
    /// connection stalled for 2 s may be closed for room); then a normal
    /// client asks for the same. Two answers are charged and two wait (the
    /// line holds the budget), the other four are refused; the first two are
    /// closed once stalled and the waiting ones go, and so on for the normal
    /// client. The budget is never exceeded, the first to stall are the ones
    /// closed, the normal client gets its answer, and nothing stays charged.
    @Test func slowReadersCannotHoldMoreThanTheBudget() throws {
        let size = 16 << 20
        let body = [UInt8](repeating: 3, count: size)
        let budget = 40 << 20
        let configuration = HTTPServerConfiguration(sendTimeoutSeconds: 8, maxPendingResponseBytes: budget)
        let server = HTTPServer(configuration: configuration) { request, responder in
            responder.respond(HTTPResponse(status: 200, body: request.path == "/small" ? [1] : body))
        }
        let port = try server.listen(.inet(host: "127.0.0.1", port: 0))
        defer { server.stop() }
        var slow: [SlowReader] = []
        for _ in 0..<8 {
            slow.append(try SlowReader(port: port, request: "GET /big HTTP/1.1\r\nHost: h\r\n\r\n"))
            usleep(100_000)   // real readers arriving one after another, as a slow crowd does
        }
        #expect(eventually(5) { server.statistics.requestsTotal == 8 })
        #expect(eventually(5) { server.statistics.connectionsClosedForRoom >= 2 },
                "\(server.statistics.connectionsClosedForRoom) closed")
        #expect(server.statistics.pendingResponseBytes <= budget)

        let small = try TestClient(port: port)
        small.send("GET /small HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(small.readResponse()?.body == [1])
        let normal = try TestClient(port: port)
        normal.send("GET /big HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(normal.readResponse()?.body.count == size, "waits for room, then is served")

        // Who was cut short: refused ones got a 503, closed ones part of their
        // 200. (Read within 1 s each: the last charged reader's send timeout
        // is seconds away still.)
        let outcomes = slow.map { $0.readToEnd(seconds: 1) }
        let stats = server.statistics
        #expect(stats.pendingResponseBytesPeak <= budget, "peak \(stats.pendingResponseBytesPeak)")
        let refused = slow.map { String(decoding: $0.start, as: UTF8.self).hasPrefix("HTTP/1.1 503 ") }
        let closed = zip(outcomes, refused).map { $0.0.ended && $0.0.bytes < size && !$0.1 }
        #expect(refused.filter { $0 }.count == stats.responsesRefusedForRoom, "\(refused)")
        #expect(closed.filter { $0 }.count == stats.connectionsClosedForRoom && stats.sendTimeouts == 0, "\(outcomes)")
        // Among the answers that were charged, the closed ones are the earliest: the stalest.
        let charged = zip(closed, refused).filter { !$0.1 }.map(\.0)
        if let firstKept = charged.firstIndex(of: false) {
            #expect(!charged[firstKept...].contains(true), "the stalest (earliest) are closed first: \(charged)")
        }
        slow.removeAll()
        #expect(eventually(5) { server.statistics.connectionsOpen == 2 && server.statistics.pendingResponseBytes == 0 },
                "only the two normal clients are left, nothing charged")
    }

    /// Ten thousand random events against a model of what is charged and
    /// waiting: the ledger's totals match it, both stay within the limit (but
    /// for one oversized response alone), and the first in line is never
    /// left waiting when it fits.
    @Test func randomEventsKeepBothAmountsExactAndBounded() {
        var ledger = Ledger(limit: 1000, staleAfter: .seconds(1))
        var random = SplitMix(seed: 7)
        var charged: [Int: Int] = [:]
        var line: [(id: Int, bytes: Int)] = []
        var nextID = 0
        for step in 0..<10_000 {
            let now = at(Double(step))
            let roll = random.next(100)
            var admitted: [Int] = []
            if roll < 40 || charged.isEmpty && line.isEmpty {
                nextID += 1
                let bytes = random.next(10) == 0 ? 1 + random.next(1500) : 1 + random.next(300)
                switch ledger.reserve(id: nextID, bytes: bytes, now: now) {
                case .write: charged[nextID] = bytes
                case .wait(let evict):
                    line.append((nextID, bytes))
                    #expect(evict.allSatisfy { charged[$0] != nil })
                case .refuse: break
                }
            } else if roll < 75, !charged.isEmpty {
                let ids = charged.keys.sorted()
                let id = ids[random.next(ids.count)]
                let n = random.next(200)
                charged[id]! -= min(n, charged[id]!)
                admitted = ledger.written(id: id, bytes: n, now: now)
            } else {
                let ids = charged.keys.sorted() + line.map(\.id)
                let id = ids[random.next(ids.count)]
                charged[id] = nil
                line.removeAll { $0.id == id }
                admitted = ledger.remove(id: id, now: now)
            }
            for id in admitted {
                let i = line.firstIndex { $0.id == id }
                #expect(i != nil, "step \(step)")
                if let i { charged[id] = line.remove(at: i).bytes }
            }
            let total = charged.values.reduce(0, +)
            let inLine = line.reduce(0) { $0 + $1.bytes }
            #expect(ledger.total == total && ledger.waitingTotal == inLine, "step \(step)")
            #expect(total <= 1000 || charged.values.filter { $0 > 0 }.count == 1, "step \(step): \(charged)")
            #expect(inLine <= 1000 || line.count == 1, "step \(step): \(line)")
            if let first = line.first {
                #expect(total > 0 && total + first.bytes > 1000, "step \(step): the first in line fits and still waits")
            }
        }
        #expect(ledger.refusals > 0 && ledger.evictions > 0 && ledger.waitingPeak <= 1500)
    }
}

/// A seeded generator: the random test replays the same events every run.
struct SplitMix {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    /// A number in 0..<bound.
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}
