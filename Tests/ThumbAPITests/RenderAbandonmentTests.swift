import Foundation
import Glibc
import Synchronization
import Testing
import ThumbTestSupport
import ThumbHTTP
@testable import ThumbAPI
@testable import ThumbJSON
@testable import ThumbService

/// Statistics.md `render.abandoned` through the real daemon: a render
/// whose every client has gone is skipped before it decodes; one client still
/// there, or a prefetch item, keeps it running. One worker, held busy by a
/// gate job submitted straight to the service's render queue, so the render
/// under test waits in the queue for exactly as long as the test needs.
@Suite(.serialized) struct RenderAbandonmentTests {
    typealias TestDaemon = EndToEndTests.TestDaemon

    /// Holds the daemon's only worker until opened.
    private final class WorkerGate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)

        init(_ daemon: TestDaemon) throws {
            let semaphore = semaphore
            try daemon.service.renders.submit(cost: 1) { semaphore.wait() }
            #expect(eventually { daemon.service.renders.statistics.active == 1 })
        }

        func open() { semaphore.signal() }
    }

    /// A client whose request is sent now and whose answer is read later, or
    /// never: it may leave first.
    private final class Client {
        private let fd: Int32

        init(_ daemon: TestDaemon, _ target: String) {
            fd = Loopback.connect(port: daemon.port, receiveTimeout: 10)
            let request = Array("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(daemon.port)\r\nConnection: close\r\n\r\n".utf8)
            #expect(fd >= 0 && send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count)
        }

        /// Closes the connection with the request unanswered.
        func leave() { close(fd) }

        /// Status and lower-cased header fields, read to the end of the
        /// connection (at most 10 s); then closes it.
        func answer() -> (status: Int, headers: [String: String], body: [UInt8]) {
            defer { close(fd) }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = recv(fd, &chunk, chunk.count, 0)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }
                bytes += chunk[0..<n]
            }
            guard let end = bytes.firstRange(of: [13, 10, 13, 10]) else { return (0, [:], []) }
            let lines = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
            let status = lines[0].split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            return (status, headers, Array(bytes[end.upperBound...]))
        }
    }

    private func target(_ url: String, _ extra: String = "&w=100&format=jpeg") -> String {
        "/thumbnail?url=\(url.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)\(extra)"
    }

    private func counters(_ daemon: TestDaemon) -> ServiceCounters { daemon.service.statistics.counters }

    /// One figure of /stats' `render` section, read over HTTP.
    private func renderFigure(_ daemon: TestDaemon, _ field: String) throws -> JSONValue? {
        guard case .object(let top) = try JSONParser.parse(daemon.get("/stats").body),
              case .object(let render)? = top.first(where: { $0.key == "render" })?.value else { return nil }
        return render.first(where: { $0.key == field })?.value
    }

    /// Waits for the queue to drain, then checks nothing is left: no render
    /// running or queued, no memory admitted, no flight, no request.
    private func expectSettled(_ daemon: TestDaemon, sourceLocation: SourceLocation = #_sourceLocation) {
        let renders = daemon.service.renders
        _ = eventually { renders.statistics == .init() && daemon.server.statistics.requestsActive == 0 }
        #expect(renders.statistics == .init(active: 0, queued: 0, memoryInUse: 0), sourceLocation: sourceLocation)
        let flights = daemon.service.flightsInProgress
        #expect(flights.renders == 0 && flights.downloads == 0, "flights: \(flights)", sourceLocation: sourceLocation)
        #expect(daemon.server.statistics.requestsActive == 0, sourceLocation: sourceLocation)
    }

    private func finish(_ daemon: TestDaemon) {
        let drained = DispatchSemaphore(value: 0)
        daemon.server.drain(deadline: 1) { drained.signal() }
        #expect(drained.wait(timeout: .now() + 3) == .success)
        daemon.service.renders.shutdown()
    }

    /// The storm case: the client leaves while its render waits behind a busy
    /// worker. The job reaches the worker and ends at once: nothing decoded,
    /// counted, cached or remembered; the downloaded original stays on disk.
    @Test func aQueuedRenderWhoseClientLeftIsSkipped() throws {
        try EndToEndTests.withDaemon({ $0.service.workers = 1 }) { daemon, origin in
            defer { finish(daemon) }
            let gate = try WorkerGate(daemon)
            let t = target(origin.url("/cat.jpg"))
            let client = Client(daemon, t)
            #expect(eventually { daemon.service.renders.statistics.queued == 1 })
            // render.memoryInUse: the running gate job's cost (1), not the queued render's.
            #expect(try renderFigure(daemon, "memoryInUse") == .integer(1))
            client.leave()
            #expect(eventually { daemon.server.statistics.requestsActive == 0 }, "the server noticed the close")
            gate.open()
            #expect(eventually { counters(daemon).renderAbandoned == 1 })
            expectSettled(daemon)
            let c = counters(daemon)
            #expect(c.renderCompleted == 0 && c.renderFailures == 0 && c.renderRejected == 0)
            #expect(daemon.service.memory.statistics.insertions == 0, "nothing rendered, so nothing cached")
            #expect(daemon.service.statistics.disk.entries == 1, "the download landed in the disk store")

            // Not negative-cached and not in memory: the next request renders from disk.
            let again = daemon.get(t)
            #expect(again.status == 200 && again.headers["x-cache"] == "disk" && again.headers["x-image-width"] == "100")
            #expect(origin.hits("/cat.jpg") == 1)
            #expect(counters(daemon).renderCompleted == 1 && counters(daemon).renderAbandoned == 1)
            // The answer goes out from inside the render job; the worker gives
            // the job's memory back only after it returns. Wait for that (the
            // figure below read 315 005, the render's cost, under load).
            expectSettled(daemon)

            // The figure, in /stats and /metrics.
            guard case .object(let top) = try JSONParser.parse(daemon.get("/stats").body),
                  case .object(let render)? = top.first(where: { $0.key == "render" })?.value else {
                Issue.record("stats shape"); return
            }
            #expect(render.first(where: { $0.key == "abandoned" })?.value == .integer(1))
            #expect(render.first(where: { $0.key == "memoryInUse" })?.value == .integer(0))
            let metrics = String(decoding: daemon.get("/metrics").body, as: UTF8.self)
            #expect(metrics.contains("\n# TYPE thumbd_render_abandoned_total counter\nthumbd_render_abandoned_total 1\n"))
        }
    }

    /// A client that leaves while the original downloads: its render is
    /// dropped before it takes a queue slot (seen while the only worker is
    /// still held); the original is still stored.
    @Test func aRenderWhoseClientLeftDuringTheDownloadIsNeverQueued() throws {
        let origin = try GatedOrigin()
        defer { origin.stop() }
        try EndToEndTests.withDaemon({ $0.service.workers = 1 }) { daemon, _ in
            defer { finish(daemon) }
            let gate = try WorkerGate(daemon)
            let client = Client(daemon, target(origin.url("/held.jpg")))
            #expect(eventually { origin.waiting == 1 })
            client.leave()
            #expect(eventually { daemon.server.statistics.requestsActive == 0 })
            origin.open()
            #expect(eventually { counters(daemon).renderAbandoned == 1 })
            #expect(daemon.service.renders.statistics.queued == 0)
            gate.open()
            expectSettled(daemon)
            #expect(counters(daemon).renderCompleted == 0 && daemon.service.memory.statistics.insertions == 0)
            #expect(daemon.service.statistics.disk.entries == 1)
        }
    }

    /// One client gone, one still there, in either order: the render runs and
    /// the one still there gets the thumbnail. A live request joining a
    /// flight whose only client left keeps it alive.
    @Test(arguments: [false, true])
    func aCoalescedRenderWithOneClientLeftStillRuns(_ leaveBeforeTheOtherJoins: Bool) throws {
        try EndToEndTests.withDaemon({ $0.service.workers = 1 }) { daemon, origin in
            defer { finish(daemon) }
            let gate = try WorkerGate(daemon)
            let t = target(origin.url("/cat.jpg"))
            let leaving = Client(daemon, t)
            #expect(eventually { daemon.service.renders.statistics.queued == 1 })
            let staying: Client
            if leaveBeforeTheOtherJoins {
                leaving.leave()
                #expect(eventually { daemon.server.statistics.requestsActive == 0 })
                staying = Client(daemon, t)
                #expect(eventually { counters(daemon).renderCoalesced == 1 })
            } else {
                staying = Client(daemon, t)
                #expect(eventually { counters(daemon).renderCoalesced == 1 })
                leaving.leave()
                #expect(eventually { daemon.server.statistics.requestsActive == 1 })
            }
            gate.open()
            let answer = staying.answer()
            #expect(answer.status == 200 && answer.headers["x-cache"] == "origin" && answer.headers["x-image-width"] == "100")
            #expect(answer.body.prefix(2) == [0xFF, 0xD8])
            expectSettled(daemon)
            let c = counters(daemon)
            #expect(c.renderCompleted == 1 && c.renderAbandoned == 0 && c.renderFailures == 0)
            #expect(origin.hits("/cat.jpg") == 1)
        }
    }

    /// A prefetch item has no client to lose: its render runs even when the
    /// only live request that joined it has left, and warms the cache.
    @Test func aPrefetchRenderIsNeverAbandoned() throws {
        try EndToEndTests.withDaemon({ $0.service.workers = 1 }) { daemon, origin in
            defer { finish(daemon) }
            let gate = try WorkerGate(daemon)
            let url = origin.url("/cat.jpg")
            let body = #"{"items": [{"url": "\#(url)", "w": 100, "format": "jpeg"}]}"#
            #expect(daemon.get("/prefetch", method: "POST", body: Array(body.utf8)).status == 202)
            #expect(eventually { daemon.service.renders.statistics.queued == 1 })
            let leaving = Client(daemon, target(url))
            #expect(eventually { counters(daemon).renderCoalesced == 1 }, "the live request joined the prefetch render")
            leaving.leave()
            #expect(eventually { daemon.server.statistics.requestsActive == 0 })
            gate.open()
            #expect(eventually { daemon.daemon.handler.report(server: daemon.server.statistics).prefetch.completed == 1 })
            expectSettled(daemon)
            let c = counters(daemon)
            #expect(c.renderCompleted == 1 && c.renderAbandoned == 0)
            let hit = daemon.get(target(url))
            #expect(hit.status == 200 && hit.headers["x-cache"] == "memory")
            #expect(origin.hits("/cat.jpg") == 1)
        }
    }
}
