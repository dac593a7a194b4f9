import Foundation
import Synchronization
import Testing
import ThumbTestSupport
@testable import ThumbAPI
@testable import ThumbRender
@testable import ThumbService
import ThumbCodec
import ThumbImaging
import ThumbJSON

/// `X-Image-Quality` and `q=auto` (SPEC §17, API.md § Output, Quality.md §
/// Automatic quality) through the real daemon, its sandboxed render workers (where the
/// search runs) and a loopback origin serving real photographs.
@Suite(.serialized) struct AutoQualityHTTPTests {
    static func photo(_ name: String) throws -> [UInt8] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../ThumbCodecTests/Fixtures/" + name).standardized
        return [UInt8](try Data(contentsOf: url))
    }

    static let routes = ["/coffee.jpg": "photos/coffee.jpg", "/rocket.jpg": "photos/rocket.jpg",
                         "/chelsea.jpg": "photos/chelsea.jpg", "/squares.gif": "animation/animated-loop-3.gif"]

    static func origin() throws -> TestOrigin {
        var bodies: [String: [UInt8]] = [:]
        for (path, name) in routes { bodies[path] = try photo(name) }
        return try TestOrigin(extraRoutes: bodies)
    }

    static func store() -> String { NSTemporaryDirectory() + "thumbd-autoq-\(UUID().uuidString)" }

    static func target(_ origin: TestOrigin, _ path: String, _ extra: String) -> String {
        "/thumbnail?url=" + origin.url(path).addingPercentEncoding(withAllowedCharacters: .alphanumerics)! + "&" + extra
    }

    /// `/stats` `SECTION.FIELD`.
    static func figure(_ daemon: EndToEndTests.TestDaemon, _ section: String, _ field: String) -> Int? {
        guard case .object(let top)? = try? JSONParser.parse(daemon.get("/stats").body),
              case .object(let fields)? = top.first(where: { $0.key == section })?.value,
              case .integer(let value)? = fields.first(where: { $0.key == field })?.value else { return nil }
        return value
    }

    /// What the search scores: the source's canonical rendition, encoded at
    /// `q` by thumbd, decoded by thumbd, against it.
    static func score(_ source: [UInt8], _ format: OutputFormat, _ q: Int) throws -> Double {
        let header = try ThumbnailPipeline.probe(source: source, limits: PipelineLimits())
        let rendition = try AutoQuality.canonicalRendition(source: source, header: header)
        let reference = format == .jpeg ? rendition.flattened() : rendition
        return try AutoQuality.score(reference, format: format, quality: q, background: nil, deadline: .none)
    }

    private func withDaemon(store: String? = nil, _ change: (inout DaemonConfiguration) -> Void = { _ in },
                            _ body: (EndToEndTests.TestDaemon, TestOrigin) throws -> Void) throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        let dir = store ?? Self.store()
        defer { if store == nil { try? FileManager.default.removeItem(atPath: dir) } }
        let daemon = try EndToEndTests.TestDaemon(store: dir, change: change)
        defer { daemon.stop() }
        try body(daemon, origin)
        #expect(JPEGXLHTTPTests.renderFigure(daemon, "crashed") == 0, "a worker died (the seccomp filter, or a crash)")
    }

    @Test func everyLossyAnswerSaysItsQualityAndNoOtherDoes() throws {
        try withDaemon { daemon, origin in
            for format in ["jpeg", "webp", "avif", "jxl"] {
                let target = Self.target(origin, "/rocket.jpg", "w=96&format=\(format)&q=61")
                let r = daemon.get(target)
                #expect(r.status == 200 && r.headers["x-image-quality"] == "61", "\(format)")
                let head = daemon.get(target, method: "HEAD")
                #expect(head.status == 200 && head.headers["x-image-quality"] == "61", "\(format) HEAD")
                let etag = try #require(r.headers["etag"])
                let notModified = daemon.get(target, headers: ["If-None-Match": etag])
                #expect(notModified.status == 304 && notModified.headers["x-image-quality"] == nil, "\(format) 304")
            }
            // The default q (80) is said too; format=auto answered as JPEG says it, as WebP too.
            let plain = daemon.get(Self.target(origin, "/rocket.jpg", "w=96"))
            #expect(plain.headers["content-type"] == "image/jpeg" && plain.headers["x-image-quality"] == "80")
            let negotiated = daemon.get(Self.target(origin, "/rocket.jpg", "w=97"), headers: ["Accept": "image/webp"])
            #expect(negotiated.headers["content-type"] == "image/webp" && negotiated.headers["x-image-quality"] == "80")
            // An animated WebP says it.
            let animated = daemon.get(Self.target(origin, "/squares.gif", "w=50&format=webp&q=70"))
            #expect(animated.status == 200 && animated.headers["x-image-frames"] != nil)
            #expect(animated.headers["x-image-quality"] == "70")
            // png and rgba accept q (auto too) and ignore it: no header.
            for extra in ["format=png&q=30", "format=rgba&q=30", "format=png&q=auto", "format=rgba&q=auto"] {
                let r = daemon.get(Self.target(origin, "/rocket.jpg", "w=96&" + extra))
                #expect(r.status == 200 && r.headers["x-image-quality"] == nil, "\(extra)")
                let head = daemon.get(Self.target(origin, "/rocket.jpg", "w=96&" + extra), method: "HEAD")
                #expect(head.status == 200 && head.headers["x-image-quality"] == nil, "\(extra) HEAD")
            }
            #expect(Self.figure(daemon, "quality", "autoSearches") == 0, "png and rgba never search")
        }
    }

    /// The search's contract on the canonical rendition, the shared cache
    /// entry of `q=auto` and the `q` it resolved to, and the second look-up
    /// answered from memory.
    @Test(arguments: [("/coffee.jpg", "webp"), ("/chelsea.jpg", "jpeg"), ("/rocket.jpg", "avif")])
    func qAutoIsTheLowestQualityReachingTheTarget(path: String, format: String) throws {
        try withDaemon { daemon, origin in
            let auto = Self.target(origin, path, "w=200&format=\(format)&q=auto")
            let first = daemon.get(auto)
            try #require(first.status == 200)
            let q = try #require(first.headers["x-image-quality"].flatMap { Int($0) })
            let source = try Self.photo(try #require(Self.routes[path]))
            let outputFormat = try #require(OutputFormat(rawValue: format))
            let score = try Self.score(source, outputFormat, q)
            if q < 100 { #expect(score >= 80, "q \(q) scores \(score)") }
            if q > 1 {
                let below = try Self.score(source, outputFormat, q - 1)
                #expect(below < 80, "q \(q - 1) scores \(below), which reaches 80")
            }
            #expect(Self.figure(daemon, "quality", "autoSearches") == 1)
            // Resolved: an ordinary memory look-up, one entry with q=Q.
            let again = daemon.get(auto)
            #expect(again.headers["x-cache"] == "memory" && again.headers["x-image-quality"] == String(q))
            #expect(again.headers["etag"] == first.headers["etag"] && again.body == first.body)
            let fixed = daemon.get(Self.target(origin, path, "w=200&format=\(format)&q=\(q)"))
            #expect(fixed.headers["x-cache"] == "memory" && fixed.headers["etag"] == first.headers["etag"])
            // Another size of the same source and format: no second search.
            let other = daemon.get(Self.target(origin, path, "w=120&format=\(format)&q=auto"))
            #expect(other.status == 200 && other.headers["x-image-quality"] == String(q))
            #expect(Self.figure(daemon, "quality", "autoSearches") == 1)
        }
    }

    /// Determinism across instances: a second daemon with its own store finds the same q.
    @Test func aSecondInstanceFindsTheSameQuality() throws {
        var found: [String] = []
        for _ in 0..<2 {
            try withDaemon { daemon, origin in
                let r = daemon.get(Self.target(origin, "/coffee.jpg", "w=150&format=jxl&q=auto"))
                #expect(r.status == 200)
                found.append(r.headers["x-image-quality"] ?? "none")
                #expect(Self.figure(daemon, "quality", "autoSearches") == 1)
            }
        }
        #expect(found.count == 2 && found[0] == found[1] && found[0] != "none")
    }

    /// While unresolved, `q=auto` requests for one variant wait on one render, which searches once.
    @Test func concurrentRequestsWhileUnresolvedShareOneSearch() throws {
        let gated = try GatedOrigin()
        defer { gated.stop() }
        let dir = Self.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let daemon = try EndToEndTests.TestDaemon(store: dir)
        defer { daemon.stop() }
        let target = "/thumbnail?url=" + gated.url("/held.jpg").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            + "&w=100&format=webp&q=auto"
        let answers = Mutex<[(Int, String?, String?)]>([])
        let n = 5
        // A thread each: concurrentPerform would run no more of them than the host has cores.
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<n {
            Thread.detachNewThread {
                let r = daemon.get(target)
                answers.withLock { $0.append((r.status, r.headers["x-image-quality"], r.headers["etag"])) }
                done.signal()
            }
        }
        // Every request joined the one render before the original arrives.
        #expect(eventually(60) { Self.figure(daemon, "render", "coalesced") == n - 1 && gated.waiting == 1 })
        gated.open()
        for _ in 0..<n { done.wait() }
        let all = answers.withLock { $0 }
        #expect(all.count == n && all.allSatisfy { $0.0 == 200 && $0.1 != nil })
        #expect(Set(all.map { $0.1 ?? "" }).count == 1 && Set(all.map { $0.2 ?? "" }).count == 1)
        #expect(Self.figure(daemon, "render", "coalesced") == n - 1)
        #expect(Self.figure(daemon, "quality", "autoSearches") == 1)
    }

    /// Kept with the facts on disk: a restarted daemon resolves without
    /// searching; a changed target searches again.
    @Test func theResultOutlivesARestartAndATargetChangeSearchesAgain() throws {
        let dir = Self.store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let origin = try Self.origin()
        defer { origin.stop() }
        let target = Self.target(origin, "/coffee.jpg", "w=180&format=webp&q=auto")
        var q: String?
        do {
            let daemon = try EndToEndTests.TestDaemon(store: dir)
            defer { daemon.stop() }
            q = daemon.get(target).headers["x-image-quality"]
            #expect(q != nil && Self.figure(daemon, "quality", "autoSearches") == 1)
            // The facts file holds it (written once the facts are known: after the answer).
            let disk = try #require(daemon.service.disk)
            let url = origin.url("/coffee.jpg")
            #expect(eventually(30) {
                guard let sha = disk.storedMetadata(url: url)?.sha256, let facts = disk.facts(url: url, sha256: sha)
                else { return false }
                return facts.autoQuality.map(\.format) == [.webp] && facts.autoQuality.first.map { String($0.q) } == q
            })
        }
        do {
            let restarted = try EndToEndTests.TestDaemon(store: dir)
            defer { restarted.stop() }
            let r = restarted.get(target)
            #expect(r.status == 200 && r.headers["x-cache"] == "disk" && r.headers["x-image-quality"] == q)
            #expect(Self.figure(restarted, "quality", "autoSearches") == 0)
            #expect(origin.hits("/coffee.jpg") == 1)
        }
        do {
            // A result of another table version (an older or newer release) is searched again.
            let url = origin.url("/coffee.jpg")
            let path = DiskStore.path(dir, DiskStore.name(for: url)) + DiskStore.factsSuffix
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let table = "\"table\":\(AutoQuality.qualityTableVersion)"
            #expect(text.contains(table))
            try text.replacingOccurrences(of: table, with: "\"table\":\(AutoQuality.qualityTableVersion + 1)")
                .write(toFile: path, atomically: true, encoding: .utf8)
            let newer = try EndToEndTests.TestDaemon(store: dir)
            defer { newer.stop() }
            let r = newer.get(target)
            #expect(r.status == 200 && r.headers["x-image-quality"] == q)
            #expect(Self.figure(newer, "quality", "autoSearches") == 1)
        }
        do {
            let lower = try EndToEndTests.TestDaemon(store: dir) { $0.service.output.autoQualityTarget = 60 }
            defer { lower.stop() }
            let r = lower.get(target)
            let found = try #require(r.headers["x-image-quality"].flatMap { Int($0) })
            #expect(Self.figure(lower, "quality", "autoSearches") == 1)
            #expect(found < Int(q ?? "0")!, "target 60 needs less than target 80's \(q ?? "")")
            // Both targets' results are not kept side by side: one per format, the newer.
            let disk = try #require(lower.service.disk)
            let url = origin.url("/coffee.jpg")
            #expect(eventually(30) {
                guard let sha = disk.storedMetadata(url: url)?.sha256 else { return false }
                return disk.facts(url: url, sha256: sha)?.autoQuality.first?.target == 60
            })
        }
    }

    /// A render that searches is admitted with the search's memory on top
    /// of its own estimate (`limits.maxDecodeMemoryBytes`, SourcesAndLimits.md § Renders).
    @Test func aSearchingRenderIsAdmittedWithTheSearchsMemory() throws {
        let source = try Self.photo("photos/coffee.jpg")
        let plan = try ThumbnailPipeline.plan(source: source, variant: PreparedVariant(width: 100, height: nil),
                                              limits: PipelineLimits())
        let plain = EncodingSpec(format: .webp, quality: 80, background: nil)
        var searching = plain
        searching.autoQualityTarget = 80
        let search = AutoQuality.searchMemory(header: plan.header, sourceBytes: source.count)
        #expect(search > AutoQuality.encoderAllowance + 512 * 341 * (16 + 72))
        #expect(try ThumbnailService.estimate(plan, searching, withFacts: false)
                == ThumbnailService.estimate(plan, plain, withFacts: false) + search)
        #expect(try ThumbnailService.estimate(plan, searching, withFacts: true)
                == ThumbnailService.estimate(plan, plain, withFacts: true) + search)
        #expect(plan.estimatedMemory(searching: true) == plan.estimatedMemory + search)
    }

    /// Another table version's result is not used (the unit rule the service applies).
    @Test func anotherTableVersionIsSearchedAgain() {
        let old = AutoQuality.Choice(format: .webp, target: 80, table: AutoQuality.qualityTableVersion + 1, q: 70)
        #expect(AutoQuality.q(in: [old], format: .webp, target: 80) == nil)
        let current = AutoQuality.Choice(format: .webp, target: 80, q: 72)
        #expect(AutoQuality.q(in: [old, current], format: .webp, target: 80) == 72)
        #expect(AutoQuality.q(in: [current], format: .webp, target: 70) == nil)
        #expect(AutoQuality.q(in: [current], format: .avif, target: 80) == nil)
        #expect(AutoQuality.merged([old], [current]) == [current])
    }

    @Test func autoIsLowerCaseOnlyAndTheTargetIsAnIntegerInRange() throws {
        try withDaemon { daemon, origin in
            for bad in ["AUTO", "Auto", "auto ", "0", "101", "80.5"] {
                let r = daemon.get(Self.target(origin, "/rocket.jpg", "w=50&q=" + bad.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!))
                #expect(r.status == 400, "q=\(bad)")
            }
            let prefetch = daemon.get("/prefetch", method: "POST",
                                      body: Array(#"{"items": [{"url": "\#(origin.url("/rocket.jpg"))", "w": 40, "q": "AUTO"}]}"#.utf8))
            #expect(prefetch.status == 400)
        }
        for bad in [#"29"#, #"96"#, #""80""#, #"80.5"#] {
            #expect(throws: ConfigurationError.self) {
                _ = try DaemonConfiguration.parse(Array(#"{"output": {"autoQualityTarget": \#(bad)}}"#.utf8))
            }
        }
        for bad in [#""AUTO""#, #"0"#, #"101"#] {
            #expect(throws: ConfigurationError.self) {
                _ = try DaemonConfiguration.parse(Array(#"{"output": {"defaultQuality": \#(bad)}}"#.utf8))
            }
        }
        let c = try DaemonConfiguration.parse(Array(#"""
            {"output": {"defaultQuality": "auto", "autoQualityTarget": 70, "presets": {"card": {"w": 64, "q": "auto"}}}}
            """#.utf8))
        #expect(c.service.output.defaultQuality == AutoQuality.unresolved && c.service.output.autoQualityTarget == 70)
        #expect(c.service.output.presets["card"]?.quality == AutoQuality.unresolved)
        // check-config prints it back as it reads.
        let again = try DaemonConfiguration.parse(Array(c.json.serialized().utf8))
        #expect(again.service.output == c.service.output)
        #expect(DaemonConfiguration().service.output.defaultQuality == 80)
        #expect(DaemonConfiguration().service.output.autoQualityTarget == 80)
    }

    /// `output.defaultQuality: "auto"`, a preset's and a prefetch item's `"auto"` all search.
    @Test func defaultPresetsAndPrefetchTakeAuto() throws {
        try withDaemon({
            $0.service.output.defaultQuality = AutoQuality.unresolved
            $0.service.output.presets["card"] = ServiceConfiguration.Preset(width: 64, format: .avif,
                                                                             quality: AutoQuality.unresolved)
        }) { daemon, origin in
            let byDefault = daemon.get(Self.target(origin, "/rocket.jpg", "w=90&format=jpeg"))
            #expect(byDefault.status == 200 && byDefault.headers["x-image-quality"] != nil)
            let preset = daemon.get(Self.target(origin, "/rocket.jpg", "preset=card"))
            #expect(preset.status == 200 && preset.headers["x-image-quality"] != nil)
            #expect(Self.figure(daemon, "quality", "autoSearches") == 2)
            let body = #"{"items": [{"url": "\#(origin.url("/coffee.jpg"))", "w": 40, "format": "webp", "q": "auto"}]}"#
            let prefetch = daemon.get("/prefetch", method: "POST", body: Array(body.utf8))
            #expect(prefetch.status == 202)
            #expect(eventually(60) { Self.figure(daemon, "quality", "autoSearches") == 3 })
            let after = daemon.get(Self.target(origin, "/coffee.jpg", "w=40&format=webp&q=auto"))
            #expect(after.headers["x-cache"] == "memory" && after.headers["x-image-quality"] != nil)
        }
    }

    /// A hostile source with q=auto is bounded by the render's deadline
    /// like any render: `422` with `no-store`, the worker killed or stopped
    /// at its deadline, the daemon answering the next request.
    @Test func aHostileSourceWithQAutoIsBoundedByTheRenderDeadline() throws {
        try withDaemon({ $0.service.limits.maxRenderSeconds = 0.05 }) { daemon, origin in
            let started = ContinuousClock.now
            let r = daemon.get(Self.target(origin, "/coffee.jpg", "w=400&format=avif&q=auto"))
            #expect(r.status == 422 && r.headers["cache-control"] == "no-store")
            #expect(ContinuousClock.now - started < .seconds(30))
            #expect(Self.figure(daemon, "quality", "autoSearches") == 0)
            #expect(daemon.get("/healthz").status == 200)
        }
    }
}

/// `q=auto`'s result through the shared store's sidecar (SeveralInstances.md):
/// what one instance searched, another reads with the facts and does not search again.
@Suite(.serialized, .seaweedS3) struct AutoQualitySharedStoreTests {
    @Test func anotherInstanceTakesTheResultFromTheSidecar() throws {
        let fleet = try SharedStoreTests.Fleet()
        defer { fleet.stop() }
        let (s3, shared, origin) = (fleet.s3, fleet.bucket, fleet.origin)
        let a = try fleet.instance(), b = try fleet.instance()
        let first = a.thumbnail(origin, SharedStoreTests.path, "&w=100&format=webp&q=auto")
        let q = try #require(first.headers["x-image-quality"])
        #expect(a.stats("quality")["autoSearches"] == 1)
        let key = "originals/" + DiskStore.name(for: origin.url(SharedStoreTests.path))
        #expect(eventually(30) {
            let doc = s3.request("GET", "/\(shared)/\(key).json")
            return doc.status == 200 && doc.body.contains("\"autoQuality\":{\"webp\":{\"target\":80,\"table\":\(AutoQuality.qualityTableVersion),\"q\":\(q)}}")
        }, "the sidecar holds the facts with the result")
        let second = b.thumbnail(origin, SharedStoreTests.path, "&w=90&format=webp&q=auto")
        #expect(second.status == 200 && second.headers["x-image-quality"] == q)
        #expect(b.stats("quality")["autoSearches"] == 0, "read with the facts from the sidecar")
        #expect(origin.hits(SharedStoreTests.path) == 1)
        #expect(eventually { a.leftovers.isEmpty && b.leftovers.isEmpty })
    }
}
