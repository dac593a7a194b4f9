import Foundation
import Testing
import ThumbTestSupport
import ThumbHTTP
@testable import ThumbAPI
@testable import ThumbJSON
@testable import ThumbService

/// Issue 5 over real loopback sockets: signed URLs, the admin token,
/// `POST /prefetch`, `DELETE /cache`.
@Suite(.serialized) struct OperationsTests {
    typealias TestDaemon = EndToEndTests.TestDaemon

    private func withDaemon(_ change: (inout DaemonConfiguration) -> Void = { _ in },
                            _ body: (TestDaemon, TestOrigin) throws -> Void) throws {
        try EndToEndTests.withDaemon(change, body)
    }

    private func encoded(_ url: String) -> String { url.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }

    private func json(_ bytes: [UInt8]) throws -> [(key: String, value: JSONValue)] {
        guard case .object(let members) = try JSONParser.parse(bytes) else { throw ServiceError.internalError("not an object") }
        return members
    }

    private func errorCode(_ bytes: [UInt8]) -> String? {
        guard let members = try? json(bytes), case .string(let code)? = members.first(where: { $0.key == "error" })?.value
        else { return nil }
        return code
    }

    /// `/stats` figure at `section.field`.
    private func stat(_ daemon: TestDaemon, _ section: String, _ field: String, token: String? = nil) -> Int {
        let r = daemon.get("/stats", headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:])
        guard case .object(let fields)? = (try? json(r.body))?.first(where: { $0.key == section })?.value,
              case .integer(let n)? = fields.first(where: { $0.key == field })?.value else { return -1 }
        return n
    }

    // MARK: signing (API.md § Signing)

    @Test func signaturesAreHMACSHA256InUnpaddedBase64URL() {
        // RFC 4231 test case 2: HMAC-SHA256("Jefe", "what do ya want for nothing?") =
        // 5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843.
        #expect(URLSignature.sign("what do ya want for nothing?", key: "Jefe") == "W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM")
        let target = "/thumbnail?url=a&w=1"
        let sig = URLSignature.sign(target, key: "k")
        #expect(!sig.contains("=") && !sig.contains("+") && !sig.contains("/") && sig.count == 43)
        #expect(URLSignature.verify(target: target + "&sig=" + sig, key: "k"))
        #expect(!URLSignature.verify(target: target + "&sig=" + sig, key: "K"))
        #expect(!URLSignature.verify(target: target + "&sig=" + sig + "&w=2", key: "k"), "sig must be last")
        #expect(!URLSignature.verify(target: target + "&sig=" + sig.dropLast(), key: "k"))
        #expect(!URLSignature.verify(target: target, key: "k"))
    }

    @Test func signedRequestsPassAndEveryOtherIsRefused() throws {
        try withDaemon({ $0.security.signingKey = "s3cret" }) { daemon, origin in
            let target = "/thumbnail?url=\(encoded(origin.url("/cat.jpg")))&w=50"
            let good = daemon.get(target + "&sig=" + URLSignature.sign(target, key: "s3cret"))
            #expect(good.status == 200 && good.headers["x-cache"] == "origin")
            let wrongKey = URLSignature.sign(target, key: "other")
            let altered = target.replacingOccurrences(of: "w=50", with: "w=51") + "&sig=" + URLSignature.sign(target, key: "s3cret")
            for refused in [target, target + "&sig=" + wrongKey, altered, target + "&sig=", target + "&sig=AAAA",
                            "/thumbnail?sig=\(URLSignature.sign("/thumbnail?", key: "s3cret"))&url=x&w=50"] {
                let r = daemon.get(refused)
                #expect(r.status == 403 && errorCode(r.body) == "bad_signature", "\(refused)")
            }
            #expect(origin.hits("/cat.jpg") == 1, "refused requests never reach the origin")
        }
    }

    @Test func withoutASigningKeyASigIsIgnored() throws {
        try withDaemon { daemon, origin in
            #expect(daemon.get("/thumbnail?url=\(encoded(origin.url("/cat.jpg")))&w=50&sig=whatever").status == 200)
        }
    }

    // MARK: admin token (API.md § Endpoints)

    @Test func adminEndpointsNeedTheBearerToken() throws {
        try withDaemon({ $0.security.adminToken = "t0k3n" }) { daemon, origin in
            let purge = "/cache?url=\(encoded(origin.url("/cat.jpg")))"
            let body = Array(#"{"items": []}"#.utf8)
            let endpoints: [(method: String, target: String, body: [UInt8]?, ok: Int)] = [
                ("GET", "/stats", nil, 200), ("GET", "/metrics", nil, 200),
                ("POST", "/prefetch", body, 202), ("DELETE", purge, nil, 200),
            ]
            for e in endpoints {
                for headers in [[:], ["Authorization": "Bearer wrong"], ["Authorization": "Basic dDBrM246"],
                                ["Authorization": "Bearer t0k3n2"], ["Authorization": "t0k3n"]] {
                    let r = daemon.get(e.target, headers: headers, method: e.method, body: e.body)
                    #expect(r.status == 401 && errorCode(r.body) == "unauthorized", "\(e.method) \(e.target) \(headers)")
                    #expect(r.headers["www-authenticate"] == "Bearer", "RFC 9110 §11.6.1: a 401 names its scheme")
                }
                let r = daemon.get(e.target, headers: ["Authorization": "Bearer t0k3n"], method: e.method, body: e.body)
                #expect(r.status == e.ok, "\(e.method) \(e.target)")
                let lowerScheme = daemon.get(e.target, headers: ["Authorization": "bearer t0k3n"], method: e.method, body: e.body)
                #expect(lowerScheme.status == e.ok)
            }
            #expect(daemon.get("/healthz").status == 200, "not an admin endpoint")
            #expect(daemon.get("/thumbnail?url=\(encoded(origin.url("/cat.jpg")))&w=20").status == 200)
        }
    }

    @Test func adminPathsAnswer405WithAllow() throws {
        try withDaemon { daemon, _ in
            let prefetch = daemon.get("/prefetch")
            #expect(prefetch.status == 405 && prefetch.headers["allow"] == "POST")
            let cache = daemon.get("/cache?url=x")
            #expect(cache.status == 405 && cache.headers["allow"] == "DELETE")
            #expect(daemon.get("/metrics", method: "POST", body: []).headers["allow"] == "GET, HEAD")
        }
    }

    // MARK: prefetch (API.md § Prefetch)

    @Test func prefetchedThumbnailsAreThenServedFromMemory() throws {
        try withDaemon { daemon, origin in
            let url = origin.url("/cat.jpg")
            let body = #"{"items": [{"url": "\#(url)", "w": 40, "h": 40, "fit": "cover", "format": "jpeg", "q": 70},"#
                + #" {"url": "\#(url)", "w": 24, "enlarge": false}]}"#
            let r = daemon.get("/prefetch", method: "POST", body: Array(body.utf8))
            #expect(r.status == 202 && String(decoding: r.body, as: UTF8.self) == #"{"accepted":2}"#)
            #expect(eventually { stat(daemon, "prefetch", "completed") == 2 })
            let hit = daemon.get("/thumbnail?url=\(encoded(url))&w=40&h=40&fit=cover&format=jpeg&q=70")
            #expect(hit.status == 200 && hit.headers["x-cache"] == "memory" && hit.headers["x-image-width"] == "40")
            #expect(daemon.get("/thumbnail?url=\(encoded(url))&w=24").headers["x-cache"] == "memory")
            #expect(origin.hits("/cat.jpg") == 1)
            #expect(stat(daemon, "memoryCache", "hits") == 2 && stat(daemon, "memoryCache", "misses") == 0,
                    "prefetch items are not /thumbnail requests")
        }
    }

    @Test func prefetchFailuresShowOnlyInStats() throws {
        try withDaemon { daemon, origin in
            let body = #"{"items": [{"url": "\#(origin.url("/missing.jpg"))", "w": 10}]}"#
            #expect(daemon.get("/prefetch", method: "POST", body: Array(body.utf8)).status == 202)
            #expect(eventually { stat(daemon, "prefetch", "failures") == 1 })
            #expect(stat(daemon, "prefetch", "queued") == 0 && stat(daemon, "prefetch", "running") == 0)
        }
    }

    @Test func malformedPrefetchBodiesAre400AndQueueNothing() throws {
        try withDaemon { daemon, origin in
            let url = origin.url("/cat.jpg")
            let item = #"{"url": "\#(url)", "w": 10}"#
            let tooMany = #"{"items": ["# + Array(repeating: item, count: 1001).joined(separator: ",") + "]}"
            let bodies = [
                "", "not json", "[]", "{}", #"{"items": {}}"#, #"{"items": [1]}"#, #"{"items": [], "extra": 1}"#,
                #"{"items": [{"url": "\#(url)", "w": "10"}]}"#, #"{"items": [{"url": "\#(url)", "w": 10.5}]}"#,
                #"{"items": [{"url": "\#(url)", "w": 10, "enlarge": 1}]}"#,
                #"{"items": [{"url": "\#(url)", "w": 10, "sig": "x"}]}"#,
                #"{"items": [{"url": "\#(url)", "w": 10, "width": 10}]}"#,
                #"{"items": [{"url": "ftp://x/a.jpg", "w": 10}]}"#, #"{"items": [{"url": "\#(url)"}]}"#,
                #"{"items": [{"url": "\#(url)", "w": 10, "fit": "cover"}]}"#,
                #"{"items": [\#(item), {"url": "\#(url)", "w": -1}]}"#, tooMany,
            ]
            for body in bodies {
                let r = daemon.get("/prefetch", method: "POST", body: Array(body.utf8))
                #expect(r.status == 400 && errorCode(r.body) == "bad_request", "\(body.prefix(80))")
            }
            let huge = daemon.get("/prefetch", method: "POST", body: [UInt8](repeating: 0x20, count: (1 << 20) + 1))
            #expect(huge.status == 413)
            let empty = daemon.get("/prefetch", method: "POST", body: Array(#"{"items": []}"#.utf8))
            #expect(empty.status == 202 && String(decoding: empty.body, as: UTF8.self) == #"{"accepted":0}"#)
            let thousand = #"{"items": ["# + Array(repeating: item, count: 1000).joined(separator: ",") + "]}"
            #expect(daemon.get("/prefetch", method: "POST", body: Array(thousand.utf8)).status == 202)
            #expect(eventually { stat(daemon, "prefetch", "completed") == 1000 })
            #expect(stat(daemon, "prefetch", "accepted") == 1000 && origin.hits("/cat.jpg") == 1)
        }
    }

    // MARK: purge (API.md § Endpoints)

    @Test func purgeForgetsTheOriginalAndEveryVariant() throws {
        try withDaemon { daemon, origin in
            let url = origin.url("/cat.jpg")
            let target = "/thumbnail?url=\(encoded(url))&w=30"
            #expect(daemon.get(target).headers["x-cache"] == "origin")
            #expect(daemon.get(target).headers["x-cache"] == "memory")
            // The facts, computed behind the first render (its decode was not at the canonical scale).
            #expect(eventually { daemon.service.statistics.counters.factsComputed == 1 })
            let purge = daemon.get("/cache?url=\(encoded(url))", method: "DELETE")
            // The original on disk, the prepared bitmap, the encoded rendition and the original's facts.
            #expect(purge.status == 200 && String(decoding: purge.body, as: UTF8.self) == #"{"removed":4}"#)
            #expect(daemon.get(target).headers["x-cache"] == "origin")
            #expect(origin.hits("/cat.jpg") == 2)
            let again = daemon.get("/cache?url=\(encoded(origin.url("/never.jpg")))", method: "DELETE")
            #expect(again.status == 200 && String(decoding: again.body, as: UTF8.self) == #"{"removed":0}"#)
            #expect(daemon.get("/cache", method: "DELETE").status == 400)
            #expect(daemon.get("/cache?url=\(encoded(url))&w=3", method: "DELETE").status == 400)
        }
    }

    @Test func purgeForgetsARememberedFailure() throws {
        try withDaemon { daemon, origin in
            let target = "/thumbnail?url=\(encoded(origin.url("/missing.jpg")))&w=30"
            #expect(daemon.get(target).status == 404 && daemon.get(target).status == 404)
            #expect(origin.hits("/missing.jpg") == 1)
            let purge = daemon.get("/cache?url=\(encoded(origin.url("/missing.jpg")))", method: "DELETE")
            #expect(String(decoding: purge.body, as: UTF8.self) == #"{"removed":1}"#)
            #expect(daemon.get(target).status == 404 && origin.hits("/missing.jpg") == 2)
        }
    }

    // MARK: metrics (Statistics.md § /metrics)

    @Test func metricsParseAsPrometheusTextAndAgreeWithStats() throws {
        try withDaemon { daemon, origin in
            let target = "/thumbnail?url=\(encoded(origin.url("/cat.jpg")))&w=30"
            #expect(daemon.get(target).headers["x-cache"] == "origin")
            #expect(daemon.get(target).headers["x-cache"] == "memory")
            #expect(daemon.get("/nope").status == 404)
            // The first render leaves its facts to a job behind it (w=30 is not the canonical scale): the
            // figures move until it ends, so both snapshots are taken after.
            #expect(eventually {
                let s = daemon.service.statistics
                return s.counters.factsComputed == 1 && s.render.active == 0 && s.render.queued == 0
            })
            let stats = daemon.get("/stats")
            let r = daemon.get("/metrics")
            #expect(r.status == 200 && r.headers["content-type"] == MetricsExposition.contentType)
            let metrics = try parseExposition(String(decoding: r.body, as: UTF8.self))
            guard case .object(let top) = try JSONParser.parse(stats.body) else { Issue.record("stats"); return }
            // Every integer figure of /stats, taken between the two requests, is in /metrics.
            var compared = 0
            for (section, value) in top {
                guard case .object(let fields) = value, section != "requests", section != "connections" else { continue }
                for (field, figure) in fields {
                    guard case .integer(let n) = figure else { continue }
                    let base = "thumbd_" + MetricsExposition.snakeCase(section) + "_" + MetricsExposition.snakeCase(field)
                    let found = metrics.value(base + "_total") ?? metrics.value(base)
                    #expect(found == Double(n), "\(section).\(field)")
                    compared += 1
                }
            }
            #expect(compared == 47)   // memoryCache 7, diskStore 8, origin 5, render 10, info 5, quality 1, sharedStore 6, prefetch 5
            #expect(metrics.value("thumbd_memory_cache_hits_total") == 1 && metrics.value("thumbd_origin_fetches_total") == 1)
            #expect(metrics.value("thumbd_requests_total", ["status": "404"]) == 1)
            // The /stats request itself was answered before /metrics ran, so it counts.
            #expect(metrics.value("thumbd_requests_total", ["status": "200"]) == 3)
            #expect(metrics.value("thumbd_request_duration_seconds_count", ["outcome": "origin"]) == 1)
            #expect(metrics.value("thumbd_request_duration_seconds_count", ["outcome": "memory"]) == 1)
            #expect(metrics.value("thumbd_request_duration_seconds_count", ["outcome": "none"]) == 2)
        }
    }
}
