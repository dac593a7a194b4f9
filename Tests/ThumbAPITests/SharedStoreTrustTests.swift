import Foundation
import Glibc
import Synchronization
import Testing
@testable import ThumbAPI
import ThumbCodec
@testable import ThumbFetch
import ThumbImaging
@testable import ThumbJSON
import ThumbRender
@testable import ThumbService
import ThumbTestSupport

/// The shared store is a cache, not an authority (SeveralInstances.md § What
/// a writer in the bucket can do): a second writer — the test itself, PUTting
/// objects into the bucket with the store's credentials — can plant copies,
/// sidecars and facts, and none of it is served; the shared bucket is never a
/// source; a store that stalls costs the origin's downloads nothing.
extension SharedStoreTests {
    /// Puts `bytes` under `url`'s object and a sidecar beside it, as anyone
    /// with write access to the bucket could: signed under `key` (nil: a
    /// `mac` of zeros), or in the format of the release before `mac` (`old`).
    func plant(_ bytes: [UInt8], for url: String, in fleet: Fleet, key: SharedStoreKey?, old: Bool = false,
               facts: OriginalFacts? = nil, _ change: (inout OriginalMetadata) -> Void = { _ in }) throws {
        var metadata = OriginalMetadata(url: url, etag: nil, lastModified: nil, fetchedAt: fleet.calendar.secondsSince1970,
                                        length: bytes.count, sha256: Digest.hex(Digest.sha256(bytes)), address: "127.0.0.1")
        change(&metadata)
        let sidecar = SharedSidecar(metadata: metadata, facts: facts)
        let document: [UInt8]
        if let key {
            document = sidecar.signed(with: key)
        } else {
            let members: [(String, JSONValue)] = [("version", .integer(old ? 1 : SharedSidecar.version)), ("metadata", metadata.json),
                                                  ("facts", facts?.json ?? .null)] + (old ? [] : [("mac", .string(String(repeating: "0", count: 64)))])
            document = Array(JSONValue.object(members).serialized().utf8)
        }
        let name = "originals/" + DiskStore.name(for: url)
        try fleet.s3.put(bytes, bucket: fleet.bucket, encodedKey: name)
        try fleet.s3.put(document, bucket: fleet.bucket, encodedKey: name + ".json")
    }

    /// The sidecar now in the bucket for `path`, read as an instance reads it.
    func sidecar(_ fleet: Fleet, _ path: String) -> SharedSidecar.Reading {
        let doc = fleet.s3.request("GET", "/\(fleet.bucket)/\(key(fleet.origin, path)).json")
        return doc.status == 200 ? SharedSidecar.read(Array(doc.body.utf8), keys: Self.keys) : .rejected("status \(doc.status)")
    }

    /// A copy planted for a URL nobody fetched, under a sidecar without the
    /// fleet's `mac` (none, or one under another key), is absent: the origin
    /// serves, `rejected` counts it, the shared store's log line says so, and
    /// the origin's copy replaces it, which the next instance then serves.
    @Test func aPlantedCopyIsRejectedAndReplaced() throws {
        let fleet = try Fleet(routes: ["/p1.jpg": TestOrigin.jpeg, "/p2.jpg": TestOrigin.jpeg])
        defer { fleet.stop() }
        let origin = fleet.origin
        try plant(Self.gray, for: origin.url("/p1.jpg"), in: fleet, key: nil)
        try plant(Self.gray, for: origin.url("/p2.jpg"), in: fleet, key: Self.otherKey) { $0.address = nil }
        let a = try fleet.instance()
        let good = a.thumbnail(origin)   // the origin's image, from /cat.jpg
        for path in ["/p1.jpg", "/p2.jpg"] {
            let r = a.thumbnail(origin, path)
            #expect(r.status == 200 && r.headers["x-cache"] == "origin" && r.body == good.body, "\(path): \(r.headers)")
            #expect(origin.hits(path) == 1)
        }
        let s = a.stats("sharedStore")
        #expect(s["rejected"] == 2 && s["hits"] == 0 && s["misses"] == 1 && s["readFailures"] == 0, "\(s)")
        let lines = a.log.filter { $0.contains("rejected") }
        #expect(lines.count == 2 && lines.allSatisfy { $0.hasPrefix("shared store: originals/") && !$0.contains("s3 source") },
                "\(a.log)")
        #expect(lines.contains { $0.contains("mac does not verify") }, "\(lines)")
        let sha = Digest.hex(Digest.sha256(TestOrigin.jpeg))
        for path in ["/p1.jpg", "/p2.jpg"] {
            #expect(eventually {
                guard case .valid(let replaced) = sidecar(fleet, path) else { return false }
                return replaced.metadata.sha256 == sha && replaced.metadata.address == "127.0.0.1"
            }, "\(path): \(sidecar(fleet, path))")
        }
        #expect(eventually { a.stats("sharedStore")["writes"] == 3 }, "\(a.stats("sharedStore"))")
        let b = try fleet.instance()
        let r = b.thumbnail(origin, "/p1.jpg")
        #expect(r.status == 200 && r.headers["x-cache"] == "disk" && r.body == good.body && origin.hits("/p1.jpg") == 1)
        #expect(b.stats("sharedStore")["hits"] == 1 && b.stats("sharedStore")["rejected"] == 0)
    }

    /// A sidecar of the release before `mac` is absent but not rejected: the
    /// origin serves, and the new format replaces it.
    @Test func anOlderReleasesSidecarIsAbsentNotRejected() throws {
        let fleet = try Fleet(routes: ["/old.jpg": TestOrigin.jpeg])
        defer { fleet.stop() }
        let origin = fleet.origin
        try plant(TestOrigin.jpeg, for: origin.url("/old.jpg"), in: fleet, key: nil, old: true)
        let a = try fleet.instance()
        let r = a.thumbnail(origin, "/old.jpg")
        #expect(r.status == 200 && r.headers["x-cache"] == "origin" && origin.hits("/old.jpg") == 1)
        let s = a.stats("sharedStore")
        #expect(s["misses"] == 1 && s["rejected"] == 0 && s["hits"] == 0, "\(s)")
        #expect(!a.log.contains { $0.contains("rejected") }, "\(a.log)")
        #expect(eventually { if case .valid = sidecar(fleet, "/old.jpg") { true } else { false } })
    }

    /// Facts in a sidecar the fleet signed are still checked against the
    /// original's own header: a copy whose facts say `gif 7x99999, 65535
    /// frames` (and a focus of its own) is served — its bytes are right —
    /// but its facts are computed again (an attention crop uses the real
    /// focus, `/info` the real facts), and the rejection is counted.
    @Test func factsThatDisagreeWithTheHeaderAreComputedAgain() throws {
        let fleet = try Fleet(routes: ["/facts.jpg": TestOrigin.jpeg])
        defer { fleet.stop() }
        let origin = fleet.origin
        let a = try fleet.instance()
        #expect(a.get("/info?url=\(encoded(origin.url(Self.path)))").status == 200)
        var real: OriginalFacts?
        #expect(eventually {
            guard case .valid(let written) = sidecar(fleet, Self.path) else { return false }
            real = written.facts
            return real != nil
        })
        var planted = try #require(real)
        let width = planted.width
        (planted.format, planted.width, planted.height, planted.frames) = (.gif, 7, 99_999, 65_535)
        planted.focus = FocalPoint(x: 0, y: 0)
        try plant(TestOrigin.jpeg, for: origin.url("/facts.jpg"), in: fleet, key: Self.keys[0], facts: planted)

        let b = try fleet.instance()
        // An attention crop is placed on the real focus, as on the instance that computed it.
        let crop = "&w=40&h=40&fit=cover&gravity=attention"
        let reference = a.thumbnail(origin, Self.path, crop), attention = b.thumbnail(origin, "/facts.jpg", crop)
        #expect(attention.status == 200 && attention.headers["x-cache"] == "disk" && attention.body == reference.body,
                "\(attention.status) \(attention.headers)")
        let info = b.get("/info?url=\(encoded(origin.url("/facts.jpg")))")
        let text = String(decoding: info.body, as: UTF8.self)
        #expect(info.status == 200 && info.headers["x-cache"] == "disk", "\(info.status) \(info.headers)")
        #expect(text.contains(#""format":"jpeg""#) && text.contains(#""width":\#(width)"#)
                && text.contains(#""frames":1"#), "\(text)")
        #expect(origin.hits("/facts.jpg") == 0, "the copy itself is good")
        #expect(b.stats("info")["computed"] == 1, "\(b.stats("info"))")
        let s = b.stats("sharedStore")
        #expect(s["hits"] == 1 && s["rejected"] == 1, "\(s)")
        #expect(b.log.contains { $0.hasPrefix("shared store: the facts in originals/") }, "\(b.log)")
    }

    /// An http(s) copy whose (signed) sidecar does not say which address it
    /// came from passes the private-network rule only where private networks
    /// are allowed; elsewhere it is absent, and the origin's own check decides.
    @Test func aSidecarWithoutItsAddressNeedsPrivateNetworksAllowed() throws {
        let fleet = try Fleet(routes: ["/noaddr.jpg": TestOrigin.jpeg])
        defer { fleet.stop() }
        let origin = fleet.origin
        try plant(TestOrigin.jpeg, for: origin.url("/noaddr.jpg"), in: fleet, key: Self.keys[0]) { $0.address = nil }
        let strict = try fleet.instance { $0.service.origin.allowPrivateNetworks = false }
        let refused = strict.thumbnail(origin, "/noaddr.jpg")
        #expect(refused.status == 403 && String(decoding: refused.body, as: UTF8.self).contains("forbidden_source"))
        #expect(origin.hits("/noaddr.jpg") == 0)
        #expect(strict.stats("sharedStore")["misses"] == 1 && strict.stats("sharedStore")["hits"] == 0)
        let open = try fleet.instance()
        let r = open.thumbnail(origin, "/noaddr.jpg")
        #expect(r.status == 200 && r.headers["x-cache"] == "disk" && origin.hits("/noaddr.jpg") == 0)
    }

    /// The shared store's bucket is never an `s3://` source, whatever the
    /// key's spelling, even when a configuration built in code lists it (a
    /// parsed one cannot): `403` before any request of any kind, no shared
    /// look-up either, in `/thumbnail`, `/info` and `POST /info` alike.
    @Test func theSharedBucketIsNeverASource() throws {
        let fleet = try Fleet()
        defer { fleet.stop() }
        let (s3, shared) = (fleet.s3, fleet.bucket)
        try s3.put(TestOrigin.jpeg, bucket: shared, encodedKey: "public/ok.jpg")
        let proxy = try LoopbackProxy(upstream: s3.port)
        defer { proxy.stop() }
        let a = try fleet.instance(endpoint: "http://127.0.0.1:\(proxy.port)") { $0.service.s3.allowedBuckets = [shared] }
        for url in ["s3://\(shared)/originals/planted", "s3://\(shared)//originals/planted",
                    "s3://\(shared)/%2Foriginals/planted", "s3://\(shared)/public/ok.jpg"] {
            for target in ["/thumbnail?url=\(encoded(url))&w=50", "/info?url=\(encoded(url))"] {
                let r = a.get(target)
                #expect(r.status == 403 && String(decoding: r.body, as: UTF8.self).contains("forbidden_source"),
                        "\(target): \(r.status)")
            }
        }
        // An upper-case spelling is no bucket name, but a virtual-host style store folds case: refused the same.
        let upper = "s3://\(shared.uppercased())/public/ok.jpg"
        for target in ["/thumbnail?url=\(encoded(upper))&w=50", "/info?url=\(encoded(upper))"] {
            #expect(a.get(target).status == 403, "\(target)")
        }
        let batch = RawHTTPClient.exchange(port: a.port, method: "POST", target: "/info",
                                           headers: ["Content-Type": "application/json"],
                                           body: Array(#"{"items": [{"url": "\#(upper)"}, {"url": "s3://\#(shared)//x"}]}"#.utf8))
        #expect(String(decoding: batch.body, as: UTF8.self).components(separatedBy: "forbidden_source").count == 3,
                "\(String(decoding: batch.body, as: UTF8.self))")
        #expect(a.get("/thumbnail?url=\(encoded("s3://Other-bucket/x"))&w=50").status == 400, "other invalid names stay 400")
        #expect(proxy.connections == 0, "\(proxy.requests)")
        let s = a.stats("sharedStore")
        #expect(s["hits"] == 0 && s["misses"] == 0 && s["readFailures"] == 0 && s["rejected"] == 0, "\(s)")
    }

    /// A store that takes writes and never answers them (a proxy that goes
    /// silent on every PUT) holds none of `origin.maxConcurrentFetches`: with
    /// 4 slots and 4 writes stalled, 12 more origin misses at once are all
    /// served, long before the writes' `s3.timeoutSeconds`.
    @Test func aStoreStallingItsWritesCostsTheOriginNothing() throws {
        let paths = (0..<16).map { "/s\($0).jpg" }
        let fleet = try Fleet(routes: Dictionary(uniqueKeysWithValues: paths.map { ($0, TestOrigin.jpeg) }))
        defer { fleet.stop() }
        let origin = fleet.origin
        let proxy = try LoopbackProxy(upstream: fleet.s3.port, stallRequests: ["PUT "], holdSeconds: 40)
        defer { proxy.stop() }
        let a = try fleet.instance(endpoint: "http://127.0.0.1:\(proxy.port)") {
            $0.service.origin.maxConcurrentFetches = 4
            $0.service.s3.timeoutSeconds = 30
        }
        for path in paths.prefix(4) { #expect(a.thumbnail(origin, path).status == 200) }
        // The first four writes run (WriteQueue.maxRunning) and hang.
        let puts = { proxy.requests.reduce(0) { $0 + $1.components(separatedBy: "PUT /").count - 1 } }
        #expect(eventually(20) { puts() >= 4 }, "\(puts()) PUTs")
        let fetcher = try #require(a.daemon.service.loader.fetcher as? Fetcher)
        #expect(fetcher.transferCounts.running == 0 && fetcher.storeTransferCounts.running >= 4,
                "\(fetcher.transferCounts) \(fetcher.storeTransferCounts)")

        let results = Mutex<[String: Int]>([:])
        let group = DispatchGroup()
        let started = Date()
        for path in paths.dropFirst(4) {
            group.enter()
            Thread.detachNewThread {
                let status = a.thumbnail(origin, path).status
                results.withLock { $0[path] = status }
                group.leave()
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        let elapsed = Date().timeIntervalSince(started)
        let statuses = results.withLock { $0 }
        #expect(statuses.count == 12 && statuses.values.allSatisfy { $0 == 200 }, "\(statuses)")
        #expect(elapsed < 25, "\(elapsed) s: no miss waited for a stalled write (30 s)")
        #expect(paths.allSatisfy { origin.hits($0) == 1 })
        #expect(a.stats("sharedStore")["writes"] == 0)
    }

    /// A store that answers nothing at all (every request goes silent):
    /// each of 20 misses at once — more than the store's own slots — costs
    /// its request one `s3.timeoutSeconds`, then the origin serves it; none
    /// is a `504`, and the origin's 4 slots do the downloads.
    @Test func aStoreAnsweringNothingCostsEachMissOneTimeout() throws {
        let paths = (0..<20).map { "/q\($0).jpg" }
        let fleet = try Fleet(routes: Dictionary(uniqueKeysWithValues: paths.map { ($0, TestOrigin.jpeg) }))
        defer { fleet.stop() }
        let origin = fleet.origin
        let proxy = try LoopbackProxy(upstream: fleet.s3.port, stallRequests: ["GET ", "PUT ", "HEAD ", "DELETE "])
        defer { proxy.stop() }
        let a = try fleet.instance(endpoint: "http://127.0.0.1:\(proxy.port)") {
            $0.service.origin.maxConcurrentFetches = 4
            $0.service.s3.timeoutSeconds = 2
        }
        let results = Mutex<[String: (status: Int, seconds: Double)]>([:])
        let group = DispatchGroup()
        for path in paths {
            group.enter()
            Thread.detachNewThread {
                let started = Date()
                let status = a.thumbnail(origin, path).status
                results.withLock { $0[path] = (status, Date().timeIntervalSince(started)) }
                group.leave()
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        let answers = results.withLock { $0 }
        #expect(answers.count == 20 && answers.values.allSatisfy { $0.status == 200 }, "\(answers)")
        // Each waited for its look-up's deadline, and no more than the client's own 10 s (a status 0 above).
        #expect(answers.values.allSatisfy { $0.seconds >= 1.9 }, "\(answers)")
        let s = a.stats("sharedStore")
        #expect(s["readFailures"] == 20 && s["hits"] == 0 && s["misses"] == 0, "\(s)")
        #expect(paths.allSatisfy { origin.hits($0) == 1 })
    }

    private func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }
}
