import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing
import ThumbTestSupport
import ThumbHTTP
@testable import ThumbFetch
@testable import ThumbAPI
@testable import ThumbJSON
@testable import ThumbService
import ThumbRender

/// The whole service over real loopback sockets: thumbd's HTTP server with the
/// service handler in front of a real origin, both on 127.0.0.1.
@Suite(.serialized) struct EndToEndTests {
    /// A loopback origin and a daemon on a fresh store (removed afterwards) for `body`.
    /// `engine`: nil runs the daemon's own (sandboxed workers).
    static func withDaemon(_ change: (inout DaemonConfiguration) -> Void = { _ in }, engine: (any RenderEngine)? = nil,
                           _ body: (TestDaemon, TestOrigin) throws -> Void) throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let dir = NSTemporaryDirectory() + "thumbd-e2e-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let daemon = try TestDaemon(store: dir, engine: engine, change: change)
        defer { daemon.stop() }
        try body(daemon, origin)
    }

    /// The real `Daemon` (the wiring `thumbd` ships) on an ephemeral loopback
    /// port, with a small HTTP client.
    final class TestDaemon: @unchecked Sendable {
        let daemon: Daemon
        let port: UInt16
        var server: HTTPServer { daemon.server }
        var service: ThumbnailService { daemon.service }

        init(store: String, engine: (any RenderEngine)? = nil,
             change: (inout DaemonConfiguration) -> Void = { _ in }) throws {
            var c = DaemonConfiguration()
            c.service.origin.allowPrivateNetworks = true   // the test origin is on loopback
            // Debug builds on a loaded CI machine can take seconds per large
            // render; only the deadline tests set a deadline that can fire.
            c.service.limits.maxRenderSeconds = 600
            change(&c)
            daemon = Daemon(configuration: c, disk: try DiskStore(directory: store, maxBytes: c.service.diskStore.maxBytes),
                            engine: engine)
            port = try daemon.listen(ListenAddress.inet(host: "127.0.0.1", port: 0))
        }

        /// Stops what the daemon started: the server (listener and every
        /// connection; waits ≤ 5 s) and the render workers. The disk store,
        /// the fetcher and its engine go when the last reference does.
        func stop(sourceLocation: SourceLocation = #_sourceLocation) {
            server.stop(sourceLocation: sourceLocation)
            service.renders.shutdown()
        }

        func get(_ target: String, headers: [String: String] = [:], method: String = "GET", body: [UInt8]? = nil)
            -> (status: Int, headers: [String: String], body: [UInt8]) {
            // One request per connection: a kept-alive idle connection would
            // still count in connections.open.
            RawHTTPClient.exchange(port: port, method: method, target: target, headers: headers, body: body)
        }
    }

    private func store() -> String { NSTemporaryDirectory() + "thumbd-e2e-\(UUID().uuidString)" }

    private func encoded(_ url: String) -> String {
        url.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    @Test func servesFromOriginThenMemoryThenDiskAfterARestart() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let dir = store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let target = "/thumbnail?url=\(encoded(origin.url("/cat.jpg")))&w=100"
        let daemon = try TestDaemon(store: dir)
        defer { daemon.stop() }
        let first = daemon.get(target)
        #expect(first.status == 200 && first.headers["x-cache"] == "origin" && first.headers["content-type"] == "image/jpeg")
        #expect(first.headers["x-image-width"] == "100" && first.headers["x-image-height"] == "67")
        #expect(first.headers["cache-control"] == "public, max-age=86400, stale-while-revalidate=3600" && first.body.prefix(2) == [0xFF, 0xD8])
        let etag = try #require(first.headers["etag"])
        let second = daemon.get(target)
        #expect(second.headers["x-cache"] == "memory" && second.body == first.body && second.headers["etag"] == etag)
        #expect(daemon.get(target, headers: ["If-None-Match": etag]).status == 304)
        let head = daemon.get(target, method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty && head.headers["content-length"] == String(first.body.count))
        #expect(origin.hits("/cat.jpg") == 1)

        // A new process on the same store: decoded from disk, same ETag, origin untouched.
        let restarted = try TestDaemon(store: dir)
        defer { restarted.stop() }
        let third = restarted.get(target)
        #expect(third.status == 200 && third.headers["x-cache"] == "disk" && third.headers["etag"] == etag)
        #expect(origin.hits("/cat.jpg") == 1)

        let stats = try JSONParser.parse(restarted.get("/stats").body)
        guard case .object(let top) = stats else { Issue.record("stats not an object"); return }
        #expect(top.map(\.key) == ["uptimeSeconds", "memoryCache", "diskStore", "origin", "render", "info", "quality", "sharedStore", "requests",
                                    "connections", "prefetch"])
    }

    @Test(arguments: [
        ("/missing.jpg", 404, "source_not_found"), ("/error.jpg", 502, "origin_error"),
        ("/text.txt", 415, "unsupported_format"), ("/empty.jpg", 415, "unsupported_format"),
        ("/truncated.jpg", 422, "corrupt_image"), ("/to-ftp", 403, "forbidden_source"),
    ])
    func originProblemsGetTheirStatusAndJSON(_ path: String, _ status: Int, _ code: String) throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let dir = store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let daemon = try TestDaemon(store: dir)
        defer { daemon.stop() }
        let r = daemon.get("/thumbnail?url=\(encoded(origin.url(path)))&w=50")
        #expect(r.status == status && r.headers["content-type"] == "application/json")
        #expect(String(decoding: r.body, as: UTF8.self).contains("\"error\":\"\(code)\""))
        // SourcesAndLimits.md: these failures are remembered and replayed without asking the
        // origin again; a refused redirect target is not among them.
        _ = daemon.get("/thumbnail?url=\(encoded(origin.url(path)))&w=50")
        #expect(origin.hits(path) == (status == 403 ? 2 : 1))
    }

    @Test func routingAndBadRequests() throws {
        let dir = store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let daemon = try TestDaemon(store: dir)
        defer { daemon.stop() }
        #expect(daemon.get("/healthz").status == 200 && daemon.get("/healthz").body == Array("ok".utf8))
        #expect(daemon.get("/nope").status == 404)
        let wrongMethod = daemon.get("/thumbnail", method: "POST")
        #expect(wrongMethod.status == 405 && wrongMethod.headers["allow"] == "GET, HEAD")
        #expect(daemon.get("/thumbnail?w=10").status == 400)
        #expect(daemon.get("/thumbnail?url=http%3A%2F%2F127.0.0.1%2Fa.jpg&w=10&bogus=1").status == 400)
    }

    @Test func thirtyConcurrentRequestsHitTheOriginOnce() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let dir = store()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let daemon = try TestDaemon(store: dir)
        defer { daemon.stop() }
        let target = "/thumbnail?url=\(encoded(origin.url("/slowish.jpg")))&w=64&h=64&fit=cover"
        let bodies = Mutex<[[UInt8]]>([])
        DispatchQueue.concurrentPerform(iterations: 30) { _ in
            let r = daemon.get(target)
            bodies.withLock { $0.append(r.status == 200 ? r.body : []) }
        }
        let all = bodies.withLock { $0 }
        #expect(all.count == 30 && Set(all).count == 1 && !all[0].isEmpty)
        #expect(origin.hits("/slowish.jpg") == 1)
        let c = daemon.service.counters.withLock { $0 }
        #expect(c.renderCompleted == 1 && c.originFetches == 1)
        // /stats shows where the other 29 went: joined the render in flight
        // (or, arriving after it finished, the memory cache).
        guard case .object(let top) = try JSONParser.parse(daemon.get("/stats").body),
              case .object(let render)? = top.first(where: { $0.key == "render" })?.value,
              case .object(let memory)? = top.first(where: { $0.key == "memoryCache" })?.value,
              case .integer(let coalesced)? = render.first(where: { $0.key == "coalesced" })?.value,
              case .integer(let hits)? = memory.first(where: { $0.key == "hits" })?.value else {
            Issue.record("stats shape"); return
        }
        #expect(coalesced >= 1 && coalesced + hits == 29, "render.coalesced \(coalesced), memoryCache.hits \(hits)")
    }
}
