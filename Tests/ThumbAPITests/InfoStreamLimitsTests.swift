import Dispatch
import Foundation
import Testing
@testable import ThumbAPI
@testable import ThumbService
import ThumbJSON
import ThumbTestSupport

/// What bounds a streamed `POST /info` (API.md § POST /info, Streaming): the
/// drain ends it with an `overloaded` line for each item not yet written; a
/// 1000-item batch of sources that never answer or are missing ends by the
/// batch deadline with exactly one line per item; a line takes at most 8 KiB,
/// whatever the `url` an error line echoes.
@Suite(.serialized) struct InfoStreamLimitsTests {
    typealias Stream = InfoStreamTests.Stream

    /// A daemon draining while a stream waits for its held items: they get
    /// `overloaded` lines, the body ends, then the drain completes.
    @Test func theDrainWritesOverloadedLinesAndEndsTheBody() throws {
        let gated = try GatedOrigin()
        defer { gated.stop() }
        try EndToEndTests.withDaemon({ $0.service.origin.timeoutSeconds = 60 }) { daemon, _ in
            let held = [gated.url("/a.jpg"), gated.url("/b.jpg")]
            let stream = try Stream(port: daemon.port, urls: ["ftp://127.0.0.1/x.jpg"] + held)
            #expect(stream.line()?["index"] as? Int == 0, "the item's own error first")
            #expect(eventually { gated.waiting == 2 })
            let drained = DispatchSemaphore(value: 0)
            let started = ContinuousClock.now
            daemon.daemon.drain(deadline: 2) { drained.signal() }   // streams end at 1.5 s
            let lines = [stream.line(), stream.line()]
            let took = (ContinuousClock.now - started) / .seconds(1)
            #expect(Set(lines.compactMap { $0?["index"] as? Int }) == [1, 2])
            for line in lines {
                let index = line?["index"] as? Int ?? 0
                #expect(line?["error"] as? String == "overloaded" && line?["url"] as? String == held[max(0, index - 1)])
            }
            #expect(took >= 1 && took < 10, "the drain's lines after \(took) s")
            #expect(stream.line() == nil && stream.ended, "the body ended before the server closed")
            #expect(drained.wait(timeout: .now() + 20) == .success)
            gated.open()
        }
    }

    /// 1000 items: 400 downloads that never answer, 300 missing sources and
    /// 300 URLs refused at once. Every item gets exactly one line, the last by
    /// the batch deadline (origin.timeoutSeconds 2 + limits.maxRenderSeconds 1),
    /// and nothing is left in flight afterwards.
    @Test func aThousandSlowOrFailingItemsEndByTheDeadlineOneLineEach() throws {
        let gated = try GatedOrigin()
        defer { gated.stop() }
        try EndToEndTests.withDaemon({
            $0.service.origin.timeoutSeconds = 2
            $0.service.limits.maxRenderSeconds = 1
            $0.service.info.maxBatchItems = 1000
        }) { daemon, origin in
            var urls: [String] = []
            for i in 0..<1000 {
                switch i % 10 {
                case 0...3: urls.append(gated.url("/never-\(i).jpg"))
                case 4...6: urls.append(origin.url("/missing-\(i).jpg"))
                default: urls.append("ftp://127.0.0.1/refused-\(i).jpg")
                }
            }
            let started = ContinuousClock.now
            let stream = try Stream(port: daemon.port, urls: urls)
            #expect(stream.head.status == 200)
            var seen = [Int](repeating: 0, count: 1000)
            while let line = stream.line() {
                let index = try #require(line["index"] as? Int)
                seen[index] += 1
                let code = line["error"] as? String
                #expect(line["url"] as? String == urls[index])
                switch index % 10 {
                case 0...3: #expect(code == "origin_timeout", "\(index): \(line)")
                case 4...6: #expect(code == "source_not_found" || code == "origin_timeout", "\(index): \(line)")
                default: #expect(code == "bad_request", "\(index): \(line)")
                }
            }
            let took = (ContinuousClock.now - started) / .seconds(1)
            #expect(stream.ended && seen.allSatisfy { $0 == 1 }, "one line per item: \(seen.filter { $0 != 1 }.count) not")
            #expect(took < 3 + 10, "the body ended after \(took) s; the deadline is 3 s")
            // The downloads still queued find nobody waiting, the held ones time out: nothing stays.
            #expect(eventually(30) { daemon.service.flightsInProgress.info == 0 && daemon.service.flightsInProgress.facts == 0 },
                    "\(daemon.service.flightsInProgress)")
            #expect(InfoHTTPTests.stats(daemon)["batchItems"] as? Int == 1000)
        }
    }

    /// An error line echoing an absurd `url` stays within 8 KiB: the start of
    /// the `url` as given, cut between scalars and ended by `…` (escaping
    /// counted: a control character takes 6 bytes); the JSON answer echoes it whole.
    @Test func anErrorLineStaysWithinEightKiB() throws {
        try EndToEndTests.withDaemon { daemon, origin in
            let long = "http://127.0.0.1/" + String(repeating: "é", count: 150_000)
            let controls = String(repeating: "\u{1}", count: 100_000)
            let cat = origin.url("/cat.jpg")
            let stream = try Stream(port: daemon.port, urls: [long, controls, cat])
            var lines: [Int: [String: Any]] = [:]
            while let line = stream.line() {
                let index = try #require(line["index"] as? Int)
                lines[index] = line
                #expect(stream.lastLineBytes <= InfoStreamAnswer.maxLineBytes, "line \(index): \(stream.lastLineBytes) bytes")
            }
            #expect(stream.ended && lines.count == 3)
            for (index, given) in [(0, long), (1, controls)] {
                let echoed = try #require(lines[index]?["url"] as? String)
                #expect(lines[index]?["error"] as? String == "bad_request")
                #expect(echoed.hasSuffix("…") && given.hasPrefix(String(echoed.dropLast())) && echoed.count > 1000,
                        "item \(index) echoes \(echoed.count) characters")
            }
            #expect(lines[2]?["format"] as? String == "jpeg" && lines[2]?["url"] as? String == cat)
            // The JSON answer is not held in lines: it echoes the url whole.
            let body = [UInt8](try JSONSerialization.data(withJSONObject: ["items": [["url": long]]]))
            let json = daemon.get("/info", method: "POST", body: body)
            let items = InfoHTTPTests.object(json.body)["items"] as? [[String: Any]]
            #expect(json.status == 200 && items?.first?["url"] as? String == long)
        }
    }

    /// The cut itself: whole when it fits, else whole scalars and `…` within the budget.
    @Test func theCutKeepsWholeScalarsWithinTheBudget() {
        #expect(InfoStreamAnswer.cut("short", toBytes: 100) == "short")
        let cut = InfoStreamAnswer.cut(String(repeating: "é\u{1}\"", count: 1000), toBytes: 100)
        #expect(cut.hasSuffix("…"))
        #expect(JSONValue.string(cut).serialized().utf8.count - 2 <= 100)
        #expect(String(repeating: "é\u{1}\"", count: 1000).hasPrefix(String(cut.dropLast())))
    }
}
