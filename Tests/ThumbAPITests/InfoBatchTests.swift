import Foundation
import Synchronization
import Testing
@testable import ThumbService
import ThumbTestSupport
@testable import ThumbAPI

/// `POST /info` (API.md § /info): answers in the request's order, each item its
/// own answer or error, one computation per source, the form refused whole, the
/// signature per item, and a deadline no slow item can stretch.
@Suite(.serialized) struct InfoBatchTests {
    private func post(_ daemon: EndToEndTests.TestDaemon, _ items: [[String: String]]) -> (status: Int, headers: [String: String], body: [UInt8]) {
        let body = try! JSONSerialization.data(withJSONObject: ["items": items])
        return daemon.get("/info", method: "POST", body: [UInt8](body))
    }

    private func items(_ body: [UInt8]) -> [[String: Any]] {
        InfoHTTPTests.object(body)["items"] as? [[String: Any]] ?? []
    }

    @Test func itemsAnswerInOrderEachWithItsOwnError() throws {
        try EndToEndTests.withDaemon { daemon, origin in
            let cat = origin.url("/cat.jpg")
            let given = [cat, origin.url("/missing.jpg"), "ftp://127.0.0.1/a.jpg", origin.url("/text.txt"),
                         cat.replacingOccurrences(of: "http://", with: "HTTP://"), origin.url("/formats/animated.gif")]
            let r = post(daemon, given.map { ["url": $0] })
            #expect(r.status == 200 && r.headers["content-type"] == "application/json" && r.headers["cache-control"] == "no-store")
            let answers = items(r.body)
            #expect(answers.count == given.count)
            guard answers.count == given.count else { return }
            try InfoHTTPTests.expectFacts(answers[0], of: TestOrigin.jpeg, url: cat, hasAlpha: false)
            #expect(answers[1]["error"] as? String == "source_not_found" && answers[1]["url"] as? String == given[1])
            #expect(answers[2]["error"] as? String == "bad_request" && answers[2]["url"] as? String == given[2])
            #expect(answers[3]["error"] as? String == "unsupported_format" && (answers[3]["message"] as? String)?.isEmpty == false)
            // Another spelling of the first source: the same object, normalized URL and all.
            #expect(NSDictionary(dictionary: answers[4]) == NSDictionary(dictionary: answers[0]))
            #expect(answers[5]["format"] as? String == "gif")
            #expect(origin.hits("/cat.jpg") == 1)

            // The same answer as GET gives, byte for byte.
            let single = daemon.get("/info?url=\(InfoHTTPTests.encoded(cat))")
            #expect(single.headers["x-cache"] == "memory")
            #expect(String(decoding: r.body, as: UTF8.self).contains(String(decoding: single.body, as: UTF8.self)))
            let stats = InfoHTTPTests.stats(daemon)
            #expect(stats["requests"] as? Int == 2 && stats["batchItems"] as? Int == 6 && stats["computed"] as? Int == 2)
        }
    }

    @Test func oneSourceAHundredTimesIsOneDownloadAndOneComputation() throws {
        try EndToEndTests.withDaemon { daemon, origin in
            let url = origin.url("/slowish.jpg")
            let r = post(daemon, Array(repeating: ["url": url], count: 100))
            let answers = items(r.body)
            #expect(r.status == 200 && answers.count == 100)
            #expect(Set(answers.map { $0["thumbhash"] as? String ?? "missing" }).count == 1)
            #expect(answers.allSatisfy { $0["url"] as? String == url && $0["error"] == nil })
            #expect(origin.hits("/slowish.jpg") == 1)
            #expect(InfoHTTPTests.stats(daemon)["computed"] as? Int == 1)
        }
    }

    @Test func theFormIsRefusedWhole() throws {
        try EndToEndTests.withDaemon({ $0.service.info.maxBatchItems = 3 }) { daemon, origin in
            let url = origin.url("/cat.jpg")
            for body in ["", "[]", "{}", #"{"items": {}}"#, #"{"items": [], "x": 1}"#, #"{"items": ["a"]}"#,
                         #"{"items": [{}]}"#, #"{"items": [{"url": 5}]}"#, #"{"items": [{"url": "\#(url)", "w": 10}]}"#,
                         #"{"items": [{"url": "\#(url)", "sig": 1}]}"#,
                         #"{"items": [{"url": "a"}, {"url": "b"}, {"url": "c"}, {"url": "d"}]}"#] {
                let r = daemon.get("/info", method: "POST", body: Array(body.utf8))
                #expect(r.status == 400 && InfoHTTPTests.object(r.body)["error"] as? String == "bad_request", "\(body)")
            }
            let empty = daemon.get("/info", method: "POST", body: Array(#"{"items": []}"#.utf8))
            #expect(empty.status == 200 && String(decoding: empty.body, as: UTF8.self) == #"{"items":[]}"#)
            let huge = #"{"items": [{"url": ""# + String(repeating: "a", count: 1 << 20) + #""}]}"#
            #expect(daemon.get("/info", method: "POST", body: Array(huge.utf8)).status == 413)
            #expect(origin.hits("/cat.jpg") == 0)
        }
    }

    @Test func eachItemIsSignedOverItsOneEncoding() throws {
        try EndToEndTests.withDaemon({ $0.security.signingKey = "k" }) { daemon, origin in
            let cat = origin.url("/cat.jpg") + "?a=(1)!"
            let other = origin.url("/formats/animated.gif")
            #expect(InfoBatch.signedTarget(url: cat).hasSuffix("%2Fcat.jpg%3Fa%3D%281%29%21"))
            let sign = { (url: String) in URLSignature.sign(InfoBatch.signedTarget(url: url), key: "k") }
            // A GET signed over an encoding that leaves `()!` bare is a valid GET, not a batch item.
            let loose = "/info?url=" + cat.addingPercentEncoding(withAllowedCharacters: .init(charactersIn: "abcdefghijklmnopqrstuvwxyz0123456789.-_~()!"))!
            let looseSig = URLSignature.sign(loose, key: "k")
            #expect(daemon.get(loose + "&sig=" + looseSig).status == 200)
            let r = post(daemon, [["url": cat, "sig": sign(cat)], ["url": other], ["url": other, "sig": sign(cat)],
                                  ["url": cat, "sig": looseSig], ["url": other, "sig": sign(other)]])
            let answers = items(r.body)
            #expect(r.status == 200 && answers.count == 5)
            guard answers.count == 5 else { return }
            #expect(answers[0]["format"] as? String == "jpeg" && answers[4]["format"] as? String == "gif")
            for i in 1...3 {
                #expect(answers[i]["error"] as? String == "bad_signature", "item \(i): \(answers[i])")
            }
        }
    }

    /// A hundred sources that never answer in time, 50 downloads at once: the batch
    /// answers by its deadline, each item `origin_timeout` in its place, and nothing
    /// stays behind once the downloads give up. (Two at once drained for 50 s, holding
    /// a temporary file per queued download, which a suite counting the process's
    /// descriptors beside this one saw.)
    @Test func slowSourcesCannotStretchTheAnswer() throws {
        try EndToEndTests.withDaemon({
            $0.service.origin.maxConcurrentFetches = 50
            $0.service.origin.timeoutSeconds = 1
            $0.service.limits.maxRenderSeconds = 0.5
        }) { daemon, origin in
            let given = (0..<100).map { origin.url("/slow.jpg?n=\($0)") }
            let started = ContinuousClock.now
            let r = post(daemon, given.map { ["url": $0] })
            let took = (ContinuousClock.now - started) / .seconds(1)
            let answers = items(r.body)
            #expect(r.status == 200 && answers.count == 100)
            #expect(took >= 0.9 && took < 3.5, "answered after \(took) s")
            #expect(answers.enumerated().allSatisfy { $1["error"] as? String == "origin_timeout" && $1["url"] as? String == given[$0] })
            #expect(eventually(120) {
                let f = daemon.service.flightsInProgress
                return f.downloads == 0 && f.info == 0 && f.facts == 0
            }, "every download ended")
        }
    }

    /// Items whose downloads are done but whose computation waits behind a busy
    /// worker: the batch's own deadline answers for them.
    @Test func aBusyWorkerCannotStretchTheAnswer() throws {
        try EndToEndTests.withDaemon({
            $0.service.workers = 1
            $0.service.origin.timeoutSeconds = 1
            $0.service.limits.maxRenderSeconds = 0.5
        }) { daemon, origin in
            let first = Atomic<Bool>(true)
            daemon.service.probeHook.withLock {
                // Held far past the batch's deadline (~1.5 s), so that a loaded host's late answer is still
                // told apart from one that waited for the worker.
                $0 = { if first.exchange(false, ordering: .relaxed) { Thread.sleep(forTimeInterval: 4.5) } }
            }
            let given = (0..<20).map { origin.url("/cat.jpg?n=\($0)") }
            let started = ContinuousClock.now
            let r = post(daemon, given.map { ["url": $0] })
            let took = (ContinuousClock.now - started) / .seconds(1)
            let answers = items(r.body)
            #expect(r.status == 200 && answers.count == 20)
            #expect(took >= 1.4 && took < 3.5, "answered after \(took) s")
            #expect(answers.enumerated().allSatisfy { $1["error"] as? String == "origin_timeout" && $1["url"] as? String == given[$0] })
            #expect(eventually(120) {
                let f = daemon.service.flightsInProgress
                return f.downloads == 0 && f.info == 0 && f.facts == 0 && daemon.service.renders.statistics.queued == 0
            }, "every computation ended")
            // The work went on after the answer: the next batch finds the facts made. With the 0.5-s
            // render limit lifted first: on a loaded host under a sanitizer a facts computation can take
            // longer than that, and a render stopped at its limit is (rightly) not remembered.
            var relaxed = daemon.service.config
            relaxed.limits.maxRenderSeconds = 60
            relaxed.origin.timeoutSeconds = 60
            daemon.service.reload(relaxed)
            var again: [[String: Any]] = []
            #expect(eventually(120) {
                again = items(post(daemon, given.suffix(5).map { ["url": $0] }).body)
                return again.count == 5 && again.allSatisfy { $0["format"] as? String == "jpeg" }
            }, "\(again)")
        }
    }

    /// Spellings of one source (RFC 3986 normalization): one download, one computation,
    /// each item the same object; the hundred-odd kilobytes of a near-1 MiB body of
    /// too-long URLs are each their own `bad_request`; a client that leaves mid-batch
    /// leaves nothing behind.
    @Test func hostileBatchesCostNothingElse() throws {
        try EndToEndTests.withDaemon { daemon, origin in
            let base = origin.url("/cat.jpg")
            let host = "127.0.0.1:\(origin.port)"
            let spellings = [base, "HTTP://\(host)/cat.jpg", "http://\(host)/./cat.jpg", "http://\(host)/x/../cat.jpg",
                             "http://\(host)/%63at.jpg", "http://\(host)/cat.jpg#frag"]
            let r = post(daemon, spellings.map { ["url": $0] })
            let answers = items(r.body)
            #expect(answers.count == spellings.count && answers.allSatisfy { $0["url"] as? String == base })
            #expect(Set(answers.map { $0["thumbhash"] as? String ?? "" }).count == 1)
            #expect(origin.hits("/cat.jpg") == 1 && InfoHTTPTests.stats(daemon)["computed"] as? Int == 1)

            // Just under 1 MiB: 100 URLs of 10 000 bytes, each refused in its place, nothing fetched.
            let long = (0..<100).map { ["url": origin.url("/cat.jpg?") + String(repeating: "q", count: 10_000 - base.count - 1) + "\($0)"] }
            let big = post(daemon, long)
            let refused = items(big.body)
            #expect(big.status == 200 && refused.count == 100 && refused.allSatisfy { $0["error"] as? String == "bad_request" })

            // A client that sends a batch of slow sources and leaves at once.
            let urls = (0..<20).map { origin.url("/slowish.jpg?gone=\($0)") }
            let body = [UInt8](try JSONSerialization.data(withJSONObject: ["items": urls.map { ["url": $0] }]))
            do {   // the client's deinit closes its socket at the end of this scope
                let client = try TestClient(port: daemon.port)
                client.send("POST /info HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.count)\r\n\r\n")
                client.send(body)
            }
            #expect(eventually(30) {
                let f = daemon.service.flightsInProgress
                return f.downloads == 0 && f.info == 0 && f.facts == 0 && origin.hits("/slowish.jpg") == 20
            }, "the batch's work ended")
            #expect(daemon.get("/healthz").status == 200)
            #expect(eventually { (InfoHTTPTests.object(daemon.get("/stats").body)["connections"] as? [String: Any])?["open"] as? Int == 1 },
                    "only the /stats request's own connection is open")
        }
    }
}
