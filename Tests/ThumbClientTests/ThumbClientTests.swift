import Synchronization
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import ThumbAPI
import ThumbClient
import ThumbService
import ThumbTestSupport

/// The client against a real thumbd on loopback (API.md § Using thumbd from a Swift app).
@Suite(.serialized) struct ThumbClientTests {
    @Test func signedURLsAreAcceptedAndAWrongKeyIsRefused() async throws {
        try await ClientTestDaemon.with({ $0.security.signingKey = "k3y" }) { d in
            let client = d.client()
            let cat = d.origin.url("/cat.jpg") + "?a=(1)!*'"
            let spec = ThumbnailSpec(source: cat, width: 50, height: 40, scale: 2, fit: .cover, format: .png,
                                     gravity: .attention, blur: 1.5)
            let thumbnail = try await client.thumbnail(spec)
            #expect(thumbnail.width == 100 && thumbnail.height == 80 && thumbnail.contentType == "image/png")
            let info = try await client.info(cat)
            #expect(info.format == "jpeg" && info.width == 640 && info.placeholder != nil)
            let batch = await client.info([cat, d.origin.url("/missing.jpg")])
            #expect(try batch[cat]?.get() == info)
            let missing = batch[d.origin.url("/missing.jpg")]
            #expect(missing.flatMap { if case .failure(let e) = $0 { e.code } else { nil } } == "source_not_found")

            var wrong = ThumbClient.Configuration(baseURL: d.baseURL, signingKey: "other")
            wrong.maxBatchItems = 10
            let stranger = ThumbClient(configuration: wrong)
            await #expect(throws: ThumbClientError.self) { try await stranger.thumbnail(spec) }
            do throws(ThumbClientError) {
                _ = try await stranger.info(cat)
                Issue.record("a wrong key was accepted")
            } catch {
                #expect(error.code == "bad_signature")
            }
        }
    }

    /// Every ladder's URLs are ones the deployment serves: `allowedSizes` as points with `dpr`,
    /// presets, pixels for a fractional scale, and every composition parameter.
    @Test func theLaddersURLsAreServed() async throws {
        try await ClientTestDaemon.with({ c in
            c.service.output.allowedSizes = [.init(width: 64, height: 64), .init(width: 128, height: 96)]
            c.service.output.presets = ["card": .init(width: 128, height: 96, fit: .cover)]
        }) { d in
            let sizes = d.client { $0.ladder = .allowedSizes([.init(width: 64, height: 64), .init(width: 128, height: 96)]) }
            let cat = d.origin.url("/cat.jpg")
            for (w, h, scale, pixels) in [(100.0, 80.0, 2.0, (256, 192)), (50, 50, 3, (192, 192)), (50, 50, 1.5, (128, 96))] {
                var spec = ThumbnailSpec(source: cat, width: w, height: h, scale: scale, fit: .cover, format: .jpeg,
                                         quality: 60, gravity: .attention, background: "102030", sharpen: 0.5)
                let t = try await sizes.thumbnail(spec)
                #expect(t.width == pixels.0 && t.height == pixels.1, "\(w)×\(h) @\(scale)")
                spec.gravity = nil
                spec.focalPoint = (0.25, 0.75)
                spec.blur = 2
                #expect(try await sizes.thumbnail(spec).width == pixels.0)
            }
            let presets = d.client { $0.ladder = .presets(["card": .init(width: 128, height: 96)]) }
            let card = try await presets.thumbnail(ThumbnailSpec(source: cat, width: 100, height: 75, scale: 2, fit: .cover))
            #expect(card.width == 256 && card.height == 192)
        }
    }

    @Test func revalidationGives304AndTheKeptBytes() async throws {
        try await ClientTestDaemon.with { d in
            let client = d.client()
            let spec = ThumbnailSpec(source: d.origin.url("/cat.jpg"), width: 64)
            let first = try await client.thumbnail(spec)
            #expect(!first.revalidated && first.etag != nil && first.bytes.count > 100)
            let second = try await client.thumbnail(spec)
            #expect(second.revalidated && second.bytes == first.bytes && second.etag == first.etag)
            #expect(d.daemon.service.statistics.counters.memoryHits == 1, "the 304 came from memory")
        }
    }

    /// 1 000 sources with a batch limit of 100: 10 requests, at most the configured number at
    /// once; identical concurrent look-ups make one request.
    @Test func aThousandSourcesAreTenBatchesWithinTheBound() async throws {
        // Room in the queue for every item's facts job: 300 can be in flight at once.
        try await ClientTestDaemon.with({ $0.service.maxQueue = 2000 }) { d in
            // A session that waits as long as a loaded CI host under a sanitizer needs (1 000 facts
            // on two workers took 198 s there, and URLSession's own 60 s failed every batch).
            let slow = URLSessionConfiguration.ephemeral
            slow.timeoutIntervalForRequest = 600
            slow.urlCache = nil
            let client = d.client(session: URLSession(configuration: slow)) { $0.maxBatchItems = 100; $0.maxConcurrentBatches = 3 }
            // One origin file under 1 000 spellings the origin serves (the query is ignored by its route).
            let sources = (0..<1000).map { d.origin.url("/cat.jpg?n=\($0)") }
            async let a = client.info(sources)
            async let b = client.info(Array(sources.prefix(200)))   // joins the first call's look-ups
            let (all, some) = await (a, b)
            #expect(all.count == 1000 && some.count == 200)
            let failed = all.values.compactMap { if case .failure(let e) = $0 { e } else { nil } }
            #expect(failed.isEmpty, "\(failed.count) failed, first \(String(describing: failed.first))")
            #expect(await client.infoBatchesSent == 10)
            let peak = await client.peakBatchesInFlight
            #expect(peak >= 1 && peak <= 3, "peak \(peak)")
            #expect(d.daemon.service.statistics.counters.infoBatchItems == 1000)
        }
    }

    @Test func cancellingATaskCancelsItsRequest() async throws {
        try await ClientTestDaemon.with { d in
            let client = d.client()
            // Every download is held at this origin until the end, so no stall of the test's sleeps (a
            // loaded CI host, or strace) can let an answer come before the cancellation it tests.
            let gated = try GatedOrigin()
            defer { gated.stop() }
            let slow = ThumbnailSpec(source: gated.url("/slow.jpg"), width: 32)
            let task = Task { try await client.thumbnail(slow) }
            // Cancelled once its download is held at the origin: a request on its way, not one unsent.
            for _ in 0..<1000 where gated.waiting == 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(gated.waiting == 1, "the request reached the origin")
            task.cancel()
            let started = ContinuousClock.now
            let result = await task.result
            #expect(ContinuousClock.now - started < .seconds(1.5), "the request ended with the task")
            guard case .failure(let error as ThumbClientError) = result else {
                Issue.record("expected cancelled, got \(result)"); return
            }
            #expect(error == .cancelled)

            let batch = Task { await client.info([gated.url("/slow.jpg?b=1")]) }
            for _ in 0..<1000 where gated.waiting < 2 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(gated.waiting == 2, "the batch's download reached the origin")
            batch.cancel()
            let answers = await batch.value
            #expect(answers.values.allSatisfy { if case .failure(.cancelled) = $0 { true } else { false } })

            // A batch another caller still waits for is not cancelled with the first (an origin of its
            // own holds the batch's download until the first caller has gone).
            let held = try GatedOrigin()
            defer { held.stop() }
            let source = held.url("/held.jpg")
            let first = Task { await client.info([source]) }
            for _ in 0..<1000 where held.waiting == 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(held.waiting == 1, "the first caller's batch reached the origin")
            let second = Task { await client.info([source]) }
            try await Task.sleep(for: .seconds(1))   // the second joins (the held origin makes waiting safe)
            first.cancel()
            let cancelledAt = ContinuousClock.now
            let gone = await first.value
            #expect(ContinuousClock.now - cancelledAt < .seconds(1), "a cancelled caller returns at once")
            #expect(gone[source].map { if case .failure(.cancelled) = $0 { true } else { false } } == true, "\(gone)")
            held.open()
            let kept = await second.value
            #expect((try? kept[source]?.get())?.format == "jpeg", "the second caller's answer: \(kept)")
            #expect(await client.infoBatchesSent == 2, "the second caller joined the first one's batch")
        }
    }
}

/// The planner asks for the rows ahead and cancels the rows scrolled away.
@Suite(.serialized) struct PrefetchPlannerTests {
    @Test func rowsAheadAreAskedForAndRowsScrolledAwayCancelled() async throws {
        try await ClientTestDaemon.with { d in
            let client = d.client()
            // Rows 0…5: even rows show the quick cat, odd rows a source the origin answers after 2 s.
            let planner = PrefetchPlanner<Int>(client: client, maxConcurrentPrefetches: 4) { row in
                ThumbnailSpec(source: d.origin.url(row % 2 == 0 ? "/cat.jpg?row=\(row)" : "/slow.jpg?row=\(row)"),
                              width: 40, height: 40, scale: 2, fit: .cover)
            }
            await planner.rowsWillAppear([0, 1, 2, 3])
            await planner.rowsWillAppear([2, 3])   // already asked for: nothing new
            #expect(await planner.started == [0, 1, 2, 3])
            await planner.rowsWillDisappear([1, 3, 5])   // 5 was never asked for
            #expect(await planner.cancelled == [1, 3])

            let quick = await planner.thumbnail(for: 0)
            #expect((try? quick.get())?.width == 80, "40 pt at 2x")
            // Row 1 was cancelled: asking for it now starts a new request (`started` shows it), which gets
            // the thumbnail where the cancelled task would give `.cancelled`. No time is asserted: the
            // cancelled request's download may have stored the original by now (on a loaded host,
            // seconds pass between these awaits), and then the new one is served from disk at once.
            let late = await planner.thumbnail(for: 1)
            #expect((try? late.get())?.width == 80, "row 1 asked again: \(late)")
            #expect(await planner.started == [0, 1, 2, 3, 1])
            // The facts came in one batch for the four sources (row 1's second request joined it).
            var known: ImageInfo?
            for _ in 0..<100 where known == nil {
                known = await planner.info(for: 3)
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(known?.width == 640 && known?.placeholder != nil)
            #expect(await client.infoBatchesSent == 1)
            #expect(d.daemon.service.statistics.counters.infoBatchItems == 4)
        }
    }
}

/// The streamed `/info` as a list reads it, and visible rows ahead of prefetched ones
/// (issue 38), against a real thumbd and a gated loopback origin.
@Suite(.serialized) struct FirstScreenClientTests {
    @Test func eachSourcesFactsComeWithItsLineNotTheBatchsEnd() async throws {
        let gated = try GatedOrigin()
        defer { gated.stop() }
        try await ClientTestDaemon.with { d in
            let client = d.client()
            let quick = d.origin.url("/cat.jpg"), held = gated.url("/held.jpg")
            let early = Mutex<[String]>([])
            let all = Task {
                await client.info([held, quick]) { source, answer in
                    if case .success = answer { early.withLock { $0.append(source) } }
                }
            }
            #expect(await eventuallyAsync { gated.waiting == 1 }, "the batch is in flight")
            // One source's facts, awaited alone, while the other item of its batch is still held.
            let facts = await client.facts(of: quick)
            #expect((try? facts.get())?.width == 640)
            #expect(gated.waiting == 1 && early.withLock { $0 } == [quick], "delivered before the batch ended")
            gated.open()
            let answers = await all.value
            #expect((try? answers[held]?.get())?.format == "jpeg" && early.withLock { $0 }.count == 2)
            #expect(await client.infoBatchesSent == 1, "facts(of:) joined the batch in flight")
            #expect(InfoStats.streamed(d) == 1)
        }
    }

    @Test func visibleRowsNeverWaitBehindPrefetches() async throws {
        let gated = try GatedOrigin()
        defer { gated.stop() }
        try await ClientTestDaemon.with { d in
            let client = d.client()
            let planner = PrefetchPlanner<Int>(client: client, maxConcurrentPrefetches: 2) { row in
                ThumbnailSpec(source: gated.url("/row\(row).jpg"), width: 40, height: 40, scale: 2, fit: .cover)
            }
            await planner.rowsWillAppear(Array(0..<6))
            #expect(await planner.started == [0, 1], "two prefetches at a time; four wait")
            // Row 5 becomes visible: its request starts now, though both prefetch slots are held.
            let visible = Task { await planner.thumbnail(for: 5) }
            #expect(await eventuallyAsync { await planner.started == [0, 1, 5] })
            gated.open()
            #expect((try? await visible.value.get())?.width == 80)
            for row in 0..<5 { #expect((try? await planner.thumbnail(for: row).get())?.width == 80, "row \(row)") }
            #expect(await planner.peakPrefetches == 2)
            #expect(await planner.started.count == 6, "every row asked once")
        }
    }
}

private func eventuallyAsync(_ condition: () async -> Bool) async -> Bool {
    for _ in 0..<400 {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(25))
    }
    return false
}

private enum InfoStats {
    static func streamed(_ d: ClientTestDaemon) -> Int { d.daemon.service.statistics.counters.infoStreamed }
}

/// The example runs a list page against a real thumbd, as a reader would.
@Suite(.serialized) struct ThumbClientExampleTests {
    @Test func theExampleFetchesAPage() async throws {
        try await ClientTestDaemon.with { d in
            let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
                .appendingPathComponent("ThumbClientExample").path
            let sources = [d.origin.url("/cat.jpg"), d.origin.url("/formats/photo-alpha.webp"), d.origin.url("/missing.jpg")]
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = [d.baseURL.absoluteString] + sources
            let out = Pipe()
            process.standardOutput = out
            try process.run()
            // Bounded: a hung example is killed, and the test fails instead of waiting forever.
            DispatchQueue.global().asyncAfter(deadline: .now() + 60) { if process.isRunning { process.terminate() } }
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            #expect(text.contains("info \(sources[0]): 640×427"), "\(text)")
            #expect(text.contains("info \(sources[2]): server(status: 404, code: \"source_not_found\""))
            #expect(text.contains("thumbnail 0: 480×360 image/"), "160×120 pt at 3× on the 480 rung")
            #expect(text.contains("again: revalidated true"))
        }
    }
}
