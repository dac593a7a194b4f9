import Foundation
import Testing
import ThumbFetch
import ThumbHTTP
@testable import ThumbService
import ThumbTestSupport
@testable import ThumbAPI

/// `POST /info` streamed (API.md § POST /info, Streaming): asked by `Accept:
/// application/x-ndjson`, answered as chunked lines, one per item, what
/// memory knows first, each other item as soon as it is known; the deadline
/// line for an item that never answers; HTTP/1.0, other `Accept`s and
/// refused bodies get today's JSON; a client that leaves abandons only what nobody
/// else waits for. (A client that stops reading is StreamedResponseTests':
/// a 1 MiB body cannot make more lines than loopback's send buffer holds.)
@Suite(.serialized) struct InfoStreamTests {
    /// A streamed batch in flight on its own connection.
    final class Stream {
        let client: TestClient
        let head: TestClient.Response
        private var pending: [UInt8] = []
        private(set) var ended = false
        /// The bytes of the last line `line()` returned, its newline included.
        private(set) var lastLineBytes = 0

        init(port: UInt16, urls: [String], accept: String = "application/x-ndjson", receiveBuffer: Int32? = nil) throws {
            client = try TestClient(port: port, receiveBuffer: receiveBuffer)
            let body = [UInt8](try JSONSerialization.data(withJSONObject: ["items": urls.map { ["url": $0] }]))
            client.send("POST /info HTTP/1.1\r\nHost: t\r\nAccept: \(accept)\r\nContent-Length: \(body.count)\r\n\r\n")
            client.send(body)
            head = try #require(client.readResponse(head: true))
        }

        /// The next line, parsed; nil once the body ended (or the connection did).
        func line() -> [String: Any]? {
            while true {
                if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let text = Array(pending[..<newline])
                    pending.removeFirst(newline + 1)
                    lastLineBytes = text.count + 1
                    return InfoHTTPTests.object(text)
                }
                guard !ended, let chunk = client.readChunk() else { return nil }
                if chunk.isEmpty {
                    ended = true
                    #expect(pending.isEmpty, "the body ends with a whole line")
                    return nil
                }
                pending += chunk
            }
        }
    }

    @Test func linesComeAsItemsAreKnownWhatMemoryKnowsFirst() throws {
        let gated = try GatedOrigin()
        defer { gated.stop() }
        try EndToEndTests.withDaemon { daemon, origin in
            let cat = origin.url("/cat.jpg"), missing = origin.url("/missing.jpg")
            #expect(daemon.get("/info?url=\(InfoHTTPTests.encoded(cat))").status == 200)
            #expect(daemon.get("/info?url=\(InfoHTTPTests.encoded(missing))").status == 404)
            let held = gated.url("/held.jpg")
            let given = [held, cat, origin.url("/formats/animated.gif"), missing, "ftp://127.0.0.1/a.jpg"]
            let stream = try Stream(port: daemon.port, urls: given)
            let h = stream.head.headers
            #expect(stream.head.status == 200 && h["content-type"] == "application/x-ndjson" && h["cache-control"] == "no-store"
                    && h["x-accel-buffering"] == "no" && h["x-content-type-options"] == "nosniff"
                    && h["transfer-encoding"] == "chunked" && h["content-length"] == nil)
            // Memory's answers first, in request order: the facts, the remembered failure, the item's own error.
            let first = (0..<3).compactMap { _ in stream.line() }
            #expect(first.map { $0["index"] as? Int } == [1, 3, 4])
            #expect(first.first?["thumbhash"] as? String != nil && first.first?["url"] as? String == cat)
            #expect(first.dropFirst().first?["error"] as? String == "source_not_found"
                    && first.dropFirst().first?["url"] as? String == missing)
            #expect(first.last?["error"] as? String == "bad_request" && first.last?["message"] != nil)
            // The GIF is computed while the held source is still downloading: its line comes before that one ends.
            let gif = stream.line()
            #expect(gif?["index"] as? Int == 2 && gif?["format"] as? String == "gif")
            #expect(gated.waiting == 1, "the slowest item is still held")
            gated.open()
            let last = stream.line()
            #expect(last?["index"] as? Int == 0 && last?["format"] as? String == "jpeg" && last?["url"] as? String == held)
            #expect(stream.line() == nil && stream.ended, "the body ends after the last item's line")
            let stats = InfoHTTPTests.stats(daemon)
            #expect(stats["streamed"] as? Int == 1 && stats["batchItems"] as? Int == 5 && stats["requests"] as? Int == 3)
        }
    }

    /// An item that never answers gets its `origin_timeout` line at the
    /// batch's deadline, and the body ends; the others came at once.
    @Test func anItemThatNeverAnswersGetsTheDeadlineLine() throws {
        let gated = try GatedOrigin()
        defer { gated.stop() }
        try EndToEndTests.withDaemon({
            $0.service.origin.timeoutSeconds = 1
            $0.service.limits.maxRenderSeconds = 0.5
        }) { daemon, _ in
            let started = ContinuousClock.now
            let stream = try Stream(port: daemon.port, urls: ["ftp://127.0.0.1/x", gated.url("/never.jpg")])
            #expect(stream.line()?["index"] as? Int == 0)
            let late = stream.line()
            let took = (ContinuousClock.now - started) / .seconds(1)
            #expect(late?["index"] as? Int == 1 && late?["error"] as? String == "origin_timeout"
                    && late?["url"] as? String == gated.url("/never.jpg"))
            #expect(took >= 0.9 && took < 10, "the deadline line after \(took) s")
            #expect(stream.line() == nil && stream.ended)
        }
    }

    /// HTTP/1.0, an `Accept` preferring JSON or naming neither, and a body
    /// refused whole get the JSON answers of a batch.
    @Test func otherwiseTheAnswerIsTodaysJSON() throws {
        try EndToEndTests.withDaemon { daemon, origin in
            let body = [UInt8](try JSONSerialization.data(withJSONObject: ["items": [["url": origin.url("/cat.jpg")]]]))
            for accept in ["application/json, application/x-ndjson;q=0.5", "*/*", "application/x-ndjson;q=0"] {
                let r = daemon.get("/info", headers: ["Accept": accept], method: "POST", body: body)
                #expect(r.status == 200 && r.headers["content-type"] == "application/json", "\(accept)")
            }
            let client = try TestClient(port: daemon.port)
            client.send("POST /info HTTP/1.0\r\nAccept: application/x-ndjson\r\nContent-Length: \(body.count)\r\n\r\n")
            client.send(body)
            let old = try #require(client.readResponse())
            #expect(old.headers["content-type"] == "application/json" && (InfoHTTPTests.object(old.body)["items"] as? [Any])?.count == 1)
            let malformed = daemon.get("/info", headers: ["Accept": "application/x-ndjson"], method: "POST", body: Array("{".utf8))
            #expect(malformed.status == 400 && malformed.headers["content-type"] == "application/json")
            #expect(InfoHTTPTests.stats(daemon)["streamed"] as? Int == 0)
        }
    }

    @Test func theAcceptRules() {
        func wants(_ accept: String?, minor: Int = 1) -> Bool {
            var headers: [(name: String, value: String)] = []
            if let accept { headers.append(("Accept", accept)) }
            return InfoStreamAnswer.wanted(HTTPRequest(method: "POST", target: "/info", path: "/info", minorVersion: minor,
                                                       headers: headers))
        }
        #expect(wants("application/x-ndjson") && wants("application/json;q=0.5, application/x-ndjson"))
        #expect(wants("application/x-ndjson;q=0.5, application/json;q=0.5"), "at least the q of JSON")
        #expect(wants("APPLICATION/X-NDJSON ; Q=0.1, */*"), "wildcards count for neither")
        #expect(!wants("application/x-ndjson", minor: 0) && !wants(nil) && !wants("*/*") && !wants("application/*"))
        #expect(!wants("application/x-ndjson;q=0") && !wants("application/json, application/x-ndjson;q=0.9"))
    }

    /// A client that leaves mid-stream: the item another request waits for
    /// goes on and serves it; the one nobody else wants stops.
    @Test func aClientThatLeavesAbandonsOnlyWhatNobodyElseWaitsFor() throws {
        let gated = try GatedOrigin()
        defer { gated.stop() }
        try EndToEndTests.withDaemon({
            $0.service.origin.maxConcurrentFetches = 4   // one per host: the second item's download waits
            $0.service.origin.timeoutSeconds = 60
        }) { daemon, _ in
            let shared = gated.url("/shared.jpg"), alone = gated.url("/alone.jpg")
            let other = try TestClient(port: daemon.port)
            other.send("GET /info?url=\(InfoHTTPTests.encoded(shared)) HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(eventually { gated.waiting == 1 })
            do {   // closed at the end of this scope, having read the head
                let stream = try Stream(port: daemon.port, urls: [shared, alone])
                #expect(stream.head.status == 200)
                #expect(eventually { daemon.service.flightsInProgress.info == 2 })
            }
            #expect(eventually { daemon.server.statistics.requestsActive == 1 }, "the stream's request ended with its client")
            // The queued download is looked at when the running one frees its slot: it finds nobody waiting.
            gated.open()
            let answer = try #require(other.readResponse())
            #expect(answer.status == 200 && InfoHTTPTests.object(answer.body)["format"] as? String == "jpeg")
            #expect(eventually(20) { InfoHTTPTests.stats(daemon)["abandoned"] as? Int == 1 },
                    "\(InfoHTTPTests.stats(daemon)) \(daemon.service.flightsInProgress)")
            #expect(InfoHTTPTests.stats(daemon)["computed"] as? Int == 1, "only the source another request waited for")
            #expect(eventually { daemon.service.flightsInProgress.info == 0 })
        }
    }
}
