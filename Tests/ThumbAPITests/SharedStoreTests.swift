import Foundation
import Glibc
import Testing
import ThumbTestSupport
import ThumbClock
import ThumbHTTP
@testable import ThumbFetch
@testable import ThumbAPI
@testable import ThumbJSON
@testable import ThumbService

/// The shared originals store (SeveralInstances.md): real daemons, each with
/// its own disk store, sharing one bucket of a real SeaweedFS on 127.0.0.1,
/// in front of a loopback origin that counts what it is asked. The faults
/// (a store down, stalling mid-body, refusing the credentials, without its
/// bucket; a local store that cannot be written) each cost the requests
/// nothing, show in `/stats` and leave nothing partial anywhere.
@Suite(.serialized, .seaweedS3) struct SharedStoreTests {
    static let path = "/cat.jpg"   // the test origin answers it with an ETag, and 304 to it
    static let target = "&w=100"
    /// The fleet's key (`diskStore.shared.keyFile`), and one that is not it.
    static let keys = [SharedStoreKey(Array("the-fleet-key-0123456789abcdef-0123456789".utf8))]
    static let otherKey = SharedStoreKey(Array("not-the-fleet-key-0123456789abcdef-01234".utf8))
    /// A second image, other bytes than `TestOrigin.jpeg`.
    static let gray = [UInt8](FileManager.default.contents(atPath: URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().appendingPathComponent("../ThumbCodecTests/Fixtures/gray.jpg").standardized.path)!)

    /// One test's fleet: the suite's SeaweedFS, a fresh bucket in it (or
    /// `bucket`, not created), a loopback origin, and the instances started
    /// on them; `stop()` stops the instances, last started first, then the origin.
    final class Fleet {
        let s3: SeaweedS3
        let bucket: String
        let origin: TestOrigin
        /// The fleet's calendar, one for every instance as a fleet shares real time: a test ages a
        /// shared copy by moving it. It starts at today's date, which sidecars a test writes by hand carry.
        let calendar = ManualWallClock(secondsSince1970: SystemWallClock().secondsSince1970)
        private var instances: [S3TestDaemon] = []

        init(bucket given: String? = nil, routes: [String: [UInt8]] = [:]) throws {
            s3 = try #require(SeaweedS3.current, "the suite's SeaweedFS (SeaweedS3Scope) is missing")
            if let given {
                bucket = given
            } else {
                bucket = "shared-\(UUID().uuidString.prefix(8).lowercased())"
                try s3.createBucket(bucket)
            }
            origin = try TestOrigin(extraRoutes: routes)
        }

        /// One instance: its own disk store, the shared store in `bucket`,
        /// reached at `endpoint` (a proxy, a port nothing listens on) and
        /// signed with `secret` (a wrong one) when given.
        func instance(endpoint: String? = nil, secret: String? = nil,
                      _ change: (inout DaemonConfiguration) -> Void = { _ in }) throws -> S3TestDaemon {
            let instance = try S3TestDaemon(wallClock: calendar) { c in
                c.service.origin.allowPrivateNetworks = true   // the origin is on 127.0.0.1
                c.useStore(s3, endpoint: endpoint, secret: secret)
                // SeaweedFS makes a new bucket's first volume on its first write, which can take seconds.
                c.service.s3.timeoutSeconds = 15
                c.service.diskStore.shared = SharedStoreLocation(bucket: bucket, prefix: "originals/", keys: SharedStoreTests.keys)
                change(&c)
            }
            instances.append(instance)
            return instance
        }

        /// An instance that has fetched `SharedStoreTests.path` from the origin
        /// once and written it to the shared store: what most tests start from.
        func writer(sourceLocation: SourceLocation = #_sourceLocation) throws -> S3TestDaemon {
            let a = try instance()
            #expect(a.thumbnail(origin).status == 200, sourceLocation: sourceLocation)
            #expect(eventually { a.stats("sharedStore")["writes"] == 1 }, "\(a.stats("sharedStore"))",
                    sourceLocation: sourceLocation)
            return a
        }

        func stop(sourceLocation: SourceLocation = #_sourceLocation) {
            for instance in instances.reversed() { instance.stop(sourceLocation: sourceLocation) }
            origin.stop()
        }
    }

    func key(_ origin: TestOrigin, _ path: String = Self.path) -> String {
        "originals/" + DiskStore.name(for: origin.url(path))
    }

    // MARK: - Read-through

    /// What one instance fetched, another serves from the shared store: no
    /// second origin fetch, `X-Cache: disk`, the same ETag, and a copy on its
    /// own disk; facts computed on the first reach the second through the sidecar.
    @Test func anotherInstanceServesWhatOneFetched() throws {
        let fleet = try Fleet()
        defer { fleet.stop() }
        let (s3, shared, origin) = (fleet.s3, fleet.bucket, fleet.origin)
        let a = try fleet.instance(), b = try fleet.instance()

        let first = a.thumbnail(origin)
        #expect(first.status == 200 && first.headers["x-cache"] == "origin")
        #expect(a.get("/info?url=\(origin.url(Self.path).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)").status == 200)
        #expect(eventually { a.stats("sharedStore")["writes"] == 1 }, "\(a.stats("sharedStore")) \(a.log)")
        // The sidecar holds the metadata, then the facts (rewritten once they are computed).
        #expect(eventually {
            let doc = s3.request("GET", "/\(shared)/\(key(origin)).json")
            return doc.status == 200 && doc.body.contains("\"facts\":{") && doc.body.contains(origin.url(Self.path))
        })
        let object = s3.request("GET", "/\(shared)/\(key(origin))")
        #expect(object.status == 200 && Array(object.body.utf8).count > 0)

        let second = b.thumbnail(origin)
        #expect(second.status == 200 && second.headers["x-cache"] == "disk", "\(second.headers)")
        #expect(second.headers["etag"] == first.headers["etag"] && second.body == first.body)
        #expect(origin.hits(Self.path) == 1, "the origin is asked once for the fleet")
        let sb = b.stats("sharedStore"), db = b.stats("diskStore")
        #expect(sb["hits"] == 1 && sb["misses"] == 0 && sb["readFailures"] == 0, "\(sb)")
        #expect(db["misses"] == 1 && db["entries"] == 1, "a copy on its own disk: \(db)")
        // Facts came with it: /info on b computes nothing.
        #expect(b.get("/info?url=\(origin.url(Self.path).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)").status == 200)
        #expect(b.stats("info")["computed"] == 0, "\(b.stats("info"))")
        // Its next variant comes from its own disk: the shared store is not asked again.
        #expect(b.thumbnail(origin, Self.path, "&w=50").headers["x-cache"] == "disk")
        #expect(b.stats("sharedStore")["hits"] == 1 && b.stats("sharedStore")["misses"] == 0)
        // A facts file being written after the answer passes through tmp: wait it out.
        #expect(eventually { a.leftovers.isEmpty && b.leftovers.isEmpty }, "\(a.leftovers) \(b.leftovers)")
    }

    /// `DELETE /cache` removes the shared copy too (and says so in
    /// `removed`): the next instance asks the origin again.
    @Test func deleteCacheRemovesTheSharedCopy() throws {
        let fleet = try Fleet()
        defer { fleet.stop() }
        let (s3, shared, origin) = (fleet.s3, fleet.bucket, fleet.origin)
        let a = try fleet.writer()
        let inMemory = try #require(a.stats("memoryCache")["entries"])
        let purge = a.get("/cache?url=\(origin.url(Self.path).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)",
                          method: "DELETE")
        // What it held in memory (the one source's entries), the original on disk, the shared copy.
        #expect(purge.status == 200 && String(decoding: purge.body, as: UTF8.self) == #"{"removed":\#(inMemory + 2)}"#,
                "\(String(decoding: purge.body, as: UTF8.self))")
        #expect(s3.request("GET", "/\(shared)/\(key(origin))").status == 404)
        #expect(s3.request("GET", "/\(shared)/\(key(origin)).json").status == 404)
        let b = try fleet.instance()
        #expect(b.thumbnail(origin).headers["x-cache"] == "origin")
        #expect(origin.hits(Self.path) == 2 && b.stats("sharedStore")["misses"] == 1)
    }

    /// Past `diskStore.ttlSeconds` (counted from the fetch time in the
    /// sidecar), a shared copy is revalidated with the origin; the `304`
    /// updates the shared sidecar's fetch time.
    @Test func aStaleSharedCopyIsRevalidated() throws {
        let fleet = try Fleet()
        defer { fleet.stop() }
        let (s3, shared, origin) = (fleet.s3, fleet.bucket, fleet.origin)
        _ = try fleet.writer()
        let before = s3.request("GET", "/\(shared)/\(key(origin, Self.path)).json").body
        fleet.calendar.advance(by: .seconds(2))
        let b = try fleet.instance { $0.service.diskStore.ttlSeconds = 1 }
        let r = b.thumbnail(origin, Self.path)
        #expect(r.status == 200 && r.headers["x-cache"] == "disk")
        #expect(b.stats("sharedStore")["hits"] == 1 && b.stats("diskStore")["revalidations"] == 1)
        #expect(origin.hits(Self.path) == 2, "one fetch, one conditional request")
        #expect(eventually { s3.request("GET", "/\(shared)/\(key(origin, Self.path)).json").body != before })
    }

    // MARK: - Faults

    /// A copy whose bytes are not what its sidecar says (replaced, cut), or
    /// a sidecar that is not one of ours, is never served: the origin is, and
    /// each counts in `rejected` and is logged as the shared store's.
    @Test func aCopyThatDoesNotMatchItsSidecarIsNeverServed() throws {
        let fleet = try Fleet(routes: ["/dog.jpg": TestOrigin.jpeg])
        defer { fleet.stop() }
        let (s3, shared, origin) = (fleet.s3, fleet.bucket, fleet.origin)
        let a = try fleet.instance()
        let good = a.thumbnail(origin)
        #expect(a.thumbnail(origin, "/dog.jpg").status == 200)
        #expect(eventually { a.stats("sharedStore")["writes"] == 2 })
        // Other bytes under the first; garbage for the second's sidecar.
        try s3.put(Array(TestOrigin.jpeg.prefix(5000)), bucket: shared, encodedKey: key(origin))
        try s3.put(Array(#"{"version": 1, "metadata": "#.utf8), bucket: shared, encodedKey: key(origin, "/dog.jpg") + ".json")
        let b = try fleet.instance()
        let r = b.thumbnail(origin)
        #expect(r.status == 200 && r.headers["x-cache"] == "origin" && r.body == good.body)
        #expect(b.thumbnail(origin, "/dog.jpg").headers["x-cache"] == "origin")
        let sb = b.stats("sharedStore")
        #expect(sb["rejected"] == 2 && sb["readFailures"] == 0 && sb["misses"] == 0 && sb["hits"] == 0, "\(sb)")
        #expect(b.log.filter { $0.hasPrefix("shared store: ") && $0.contains(" rejected (") }.count == 2, "\(b.log)")
        #expect(origin.hits(Self.path) == 2 && origin.hits("/dog.jpg") == 2)
        #expect(eventually { b.leftovers.isEmpty }, "\(b.leftovers)")
    }

    /// A store that is not there at all (nothing listens on its port): every
    /// request is served from the origin, each look-up counts in
    /// `readFailures`, each write in `writeFailures`, the log says it once.
    @Test func aStoreDownAtStartCostsNothing() throws {
        let fleet = try Fleet(bucket: "nowhere-bucket", routes: ["/dog.jpg": TestOrigin.jpeg])
        defer { fleet.stop() }
        let origin = fleet.origin
        let a = try fleet.instance(endpoint: "http://127.0.0.1:\(Loopback.freePort())")
        for w in [100, 60] {
            let r = a.thumbnail(origin, Self.path, "&w=\(w)")
            #expect(r.status == 200)
        }
        #expect(a.thumbnail(origin, "/dog.jpg").status == 200)
        let s = a.stats("sharedStore")
        #expect(s["readFailures"] == 2 && s["hits"] == 0 && s["misses"] == 0, "\(s)")
        // Two originals could not be written (a facts sidecar may have been tried too, before the first failed).
        #expect(eventually { (a.stats("sharedStore")["writeFailures"] ?? 0) >= 2 }, "\(a.stats("sharedStore"))")
        #expect(a.stats("sharedStore")["writes"] == 0)
        #expect(a.log.filter { $0.hasPrefix("shared store: reading") }.count == 1, "\(a.log)")
        #expect(eventually { a.leftovers.isEmpty }, "\(a.leftovers)")
    }

    /// A store that stalls in the middle of an original's bytes: the look-up
    /// gives up at `s3.timeoutSeconds`, the origin serves, and nothing of the
    /// cut copy is kept.
    @Test func aStoreStallingMidTransferFallsBackToTheOrigin() throws {
        let fleet = try Fleet()
        defer { fleet.stop() }
        let (s3, shared, origin) = (fleet.s3, fleet.bucket, fleet.origin)
        _ = try fleet.writer()
        // The sidecar's answer (about 1 KiB) passes; the original's (tens of KiB) stops after its first bytes.
        let proxy = try LoopbackProxy(upstream: s3.port, stallAfter: 6000)
        defer { proxy.stop() }
        let b = try fleet.instance(endpoint: "http://127.0.0.1:\(proxy.port)") { $0.service.s3.timeoutSeconds = 1 }
        let started = Date()
        let r = b.thumbnail(origin)
        #expect(r.status == 200 && r.headers["x-cache"] == "origin")
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(b.stats("sharedStore")["readFailures"] == 1 && origin.hits(Self.path) == 2, "\(b.stats("sharedStore"))")
        #expect(proxy.requests.contains { $0.contains("GET /\(shared)/\(key(origin)) ") })
        // Facts computed after the answer pass through tmp on their way to the store: wait them out.
        #expect(eventually { b.leftovers.isEmpty }, "\(b.leftovers)")
        #expect(b.stats("diskStore")["entries"] == 1, "only the origin's copy")
    }

    /// Wrong credentials: S3 refuses every request; the origin serves, and
    /// the log names S3's code (never the secret).
    @Test func wrongCredentialsAreReadAndWriteFailures() throws {
        let fleet = try Fleet()
        defer { fleet.stop() }
        let (s3, origin) = (fleet.s3, fleet.origin)
        let a = try fleet.instance(secret: "not-the-secret")
        #expect(a.thumbnail(origin).status == 200)
        #expect(eventually { a.stats("sharedStore")["writeFailures"] == 1 })
        let s = a.stats("sharedStore")
        #expect(s["readFailures"] == 1 && s["writes"] == 0, "\(s)")
        #expect(a.log.contains { $0.contains("403") }, "\(a.log)")
        #expect(!a.log.contains { $0.contains("not-the-secret") || $0.contains(s3.secretKey) })
    }

    /// The bucket deleted under a running fleet: look-ups are failures (not
    /// misses: the operator must hear of it), writes fail, requests are served.
    @Test func aDeletedBucketIsAFailureNotAMiss() throws {
        let fleet = try Fleet()
        defer { fleet.stop() }
        let (s3, shared, origin) = (fleet.s3, fleet.bucket, fleet.origin)
        let a = try fleet.instance()
        #expect(s3.request("DELETE", "/\(shared)").status == 204)
        #expect(a.thumbnail(origin).status == 200)
        #expect(a.stats("sharedStore")["readFailures"] == 1 && a.stats("sharedStore")["misses"] == 0)
        #expect(a.log.contains { $0.contains("NoSuchBucket") }, "\(a.log)")
        // AWS S3 refuses the write (NoSuchBucket); SeaweedFS makes the bucket again. Either way it is counted.
        #expect(eventually { let s = a.stats("sharedStore"); return (s["writes"] ?? 0) + (s["writeFailures"] ?? 0) == 1 },
                "\(a.stats("sharedStore"))")
    }

    /// A local store that cannot be written (its `tmp` replaced by a file):
    /// the shared copy is still served, from a scratch file, and nothing is
    /// left on either side.
    @Test func aLocalStoreThatCannotBeWrittenStillServesSharedCopies() throws {
        let fleet = try Fleet()
        defer { fleet.stop() }
        let origin = fleet.origin
        _ = try fleet.writer()
        let b = try fleet.instance()
        try FileManager.default.removeItem(atPath: b.directory + "/tmp")
        #expect(FileManager.default.createFile(atPath: b.directory + "/tmp", contents: Data("not a directory".utf8)))
        for w in [100, 60] {
            let r = b.thumbnail(origin, Self.path, "&w=\(w)")
            #expect(r.status == 200 && r.headers["x-cache"] == "disk", "\(r.headers)")
        }
        #expect(origin.hits(Self.path) == 1)
        #expect(b.stats("sharedStore")["hits"] == 2 && b.stats("diskStore")["entries"] == 0)
        #expect(regularFiles(under: b.directory) == ["tmp"], "\(regularFiles(under: b.directory))")
    }

    /// A shared copy larger than this instance's `limits.maxSourceBytes` is
    /// not taken: the origin's answer decides, as without a shared store.
    @Test func aCopyOverThisInstancesSourceLimitIsNotTaken() throws {
        let fleet = try Fleet()
        defer { fleet.stop() }
        let origin = fleet.origin
        _ = try fleet.writer()
        let b = try fleet.instance { $0.service.limits.maxSourceBytes = TestOrigin.jpeg.count - 1 }
        let r = b.thumbnail(origin)
        #expect(r.status == 422 && String(decoding: r.body, as: UTF8.self).contains("source_too_large"), "\(r.status)")
        #expect(b.stats("sharedStore")["misses"] == 1 && b.stats("sharedStore")["hits"] == 0)
        #expect(origin.hits(Self.path) == 2 && b.leftovers.isEmpty)
    }
}

extension S3TestDaemon {
    /// `path` at `origin` through `/thumbnail`, at width 100 unless `extra` says otherwise.
    func thumbnail(_ origin: TestOrigin, _ path: String = SharedStoreTests.path,
                   _ extra: String = SharedStoreTests.target) -> (status: Int, headers: [String: String], body: [UInt8]) {
        get("/thumbnail?url=\(origin.url(path).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)\(extra)")
    }
}
