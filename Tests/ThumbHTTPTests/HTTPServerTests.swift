import Foundation
import Synchronization
import Testing
import ThumbTestSupport
@testable import ThumbHTTP

final class Counter: Sendable {
    private let value = Mutex(0)
    func bump() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

/// Real sockets on loopback only.
@Suite struct HTTPServerTests {
    /// Echoes the path and query; `/slow` answers after 300 ms from another thread.
    static func makeServer(_ config: HTTPServerConfiguration = HTTPServerConfiguration(),
                           cancelled: Counter? = nil) throws -> (HTTPServer, UInt16) {
        let server = HTTPServer(configuration: config) { request, responder in
            switch request.path {
            case "/slow":
                DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
                    if responder.isCancelled { cancelled?.bump() }
                    responder.respond(HTTPResponse(status: 200, body: Array("slow".utf8)))
                }
            case "/big":
                responder.respond(HTTPResponse(status: 200, body: [UInt8](repeating: 7, count: 4 << 20)))
            default:
                let q = request.query.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
                responder.respond(HTTPResponse(status: 200, headers: [("X-Cache", "memory")],
                                               body: Array("\(request.method) \(request.path) \(q) \(request.body.count)".utf8)))
            }
        }
        let port = try server.listen(ListenAddress.inet(host: "127.0.0.1", port: 0))
        return (server, port)
    }

    @Test func keepAliveServesTwentyRequestsOnOneConnection() throws {
        let (server, port) = try Self.makeServer()
        defer { server.stop() }
        let client = try TestClient(port: port)
        for i in 0..<20 {
            client.send("GET /n?i=\(i) HTTP/1.1\r\nHost: x\r\n\r\n")
            let r = try #require(client.readResponse())
            #expect(r.status == 200 && r.text == "GET /n i=\(i) 0" && r.headers["date"] != nil && r.headers["server"] == "thumbd")
        }
        #expect(server.statistics.connectionsAccepted == 1 && server.statistics.requestsTotal == 20)
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let (server, port) = try Self.makeServer()
        defer { server.stop() }
        let client = try TestClient(port: port)
        client.send("GET /slow HTTP/1.1\r\nHost: h\r\n\r\nGET /a HTTP/1.1\r\nHost: h\r\n\r\nPOST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nxyz")
        #expect(client.readResponse()?.text == "slow")
        #expect(client.readResponse()?.text == "GET /a  0")
        #expect(client.readResponse()?.text == "POST /b  3")
    }

    @Test func aRequestSentOneByteAtATime() throws {
        let (server, port) = try Self.makeServer()
        defer { server.stop() }
        let client = try TestClient(port: port)
        for byte in Array("GET /one?x=a%20b HTTP/1.1\r\nHost: h\r\n\r\n".utf8) { client.send([byte]) }
        #expect(client.readResponse()?.text == "GET /one x=a b 0")
    }

    @Test func http10ClosesUnlessKeepAliveAndHeadHasNoBody() throws {
        let (server, port) = try Self.makeServer()
        defer { server.stop() }
        let old = try TestClient(port: port)
        old.send("GET /x HTTP/1.0\r\n\r\n")
        #expect(old.readResponse()?.headers["connection"] == "close")
        #expect(old.isClosedByPeer())
        let kept = try TestClient(port: port)
        kept.send("GET /x HTTP/1.0\r\nConnection: keep-alive\r\n\r\nHEAD /x HTTP/1.1\r\nHost: h\r\n\r\nGET /y HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(kept.readResponse()?.status == 200)
        let head = try #require(kept.readResponse(head: true))
        #expect(head.headers["content-length"] == "10" && head.body.isEmpty, "the length of the GET body")
        #expect(kept.readResponse()?.text == "GET /y  0", "the HEAD answer carried no body")
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: h\r\n" + String(repeating: "X-Pad: " + String(repeating: "p", count: 100) + "\r\n", count: 40) + "\r\n", 431, "headers_too_large"),
        ("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\nHost: h\r\n\r\n", 414, "uri_too_long"),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n", 411, "length_required"),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2000000\r\n\r\n", 413, "payload_too_large"),
        ("BLAH\r\n\r\n", 400, "bad_request"),
    ])
    func limitsAnswerTheirStatusAndClose(_ text: String, _ status: Int, _ code: String) throws {
        let (server, port) = try Self.makeServer(HTTPServerConfiguration(maxHeaderBytes: 2048))
        defer { server.stop() }
        let client = try TestClient(port: port)
        client.send(text)
        let r = try #require(client.readResponse())
        #expect(r.status == status && r.headers["content-type"] == "text/plain" && r.text.hasPrefix("\(code): "))
        #expect(client.isClosedByPeer())
        #expect(eventually { server.statistics.byStatus[status] == 1 && server.statistics.connectionsOpen == 0 })
    }

    @Test func incompleteHeadGets408AndIdleConnectionsClose() throws {
        let (server, port) = try Self.makeServer(HTTPServerConfiguration(requestTimeoutSeconds: 0.5, idleTimeoutSeconds: 0.5))
        defer { server.stop() }
        let slow = try TestClient(port: port)
        slow.send("GET / HTTP/1.1\r\nHost:")
        let r = try #require(slow.readResponse())
        #expect(r.status == 408 && r.text.contains("request_timeout") && slow.isClosedByPeer())
        let idle = try TestClient(port: port)
        idle.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(idle.readResponse()?.status == 200)
        let start = Date()
        #expect(idle.isClosedByPeer() && Date().timeIntervalSince(start) < 3)
    }

    @Test func connectionsOverTheLimitAreAcceptedAndClosed() throws {
        let (server, port) = try Self.makeServer(HTTPServerConfiguration(maxConnections: 2))
        defer { server.stop() }
        let a = try TestClient(port: port), b = try TestClient(port: port)
        #expect(eventually { server.statistics.connectionsOpen == 2 })
        let c = try TestClient(port: port)
        #expect(c.isClosedByPeer())
        a.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        b.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(a.readResponse()?.status == 200 && b.readResponse()?.status == 200)
        #expect(server.statistics.connectionsAccepted == 3)
    }

    @Test func fiveHundredConcurrentConnectionsAreAllAnswered() throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 2048 { limit.rlim_cur = min(limit.rlim_max, 4096); setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) }
        let (server, port) = try Self.makeServer()
        defer { server.stop() }
        let clients = try (0..<500).map { _ in try TestClient(port: port) }
        for (i, c) in clients.enumerated() { c.send("GET /c?i=\(i) HTTP/1.1\r\nHost: h\r\n\r\n") }
        var answered = 0
        for (i, c) in clients.enumerated() where c.readResponse()?.text == "GET /c i=\(i) 0" { answered += 1 }
        #expect(answered == 500)
    }

    @Test func aSlowHeaderClientDoesNotDelayOthers() throws {
        let (server, port) = try Self.makeServer()
        defer { server.stop() }
        let slow = try TestClient(port: port)
        slow.send("GET / HT")
        let start = Date()
        let other = try TestClient(port: port)
        other.send("GET /fast HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(other.readResponse()?.status == 200)
        // Served while the slow client still holds its half header (which it completes only below): a server
        // it blocked would not answer at all. The bound is for a loaded host, far from that.
        #expect(Date().timeIntervalSince(start) < 2)
        slow.send("TP/1.1\r\nHost: h\r\n\r\n")
        #expect(slow.readResponse()?.status == 200)
    }

    @Test func aClientThatLeavesCancelsItsRequestAndLeaksNothing() throws {
        let cancelled = Counter()
        let (server, port) = try Self.makeServer(cancelled: cancelled)
        defer { server.stop() }
        do {
            let client = try TestClient(port: port)
            client.send("GET /slow HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(eventually { server.statistics.requestsActive == 1 })
        }
        #expect(eventually { server.statistics.connectionsOpen == 0 && server.statistics.requestsActive == 0 })
        #expect(eventually { cancelled.count == 1 })
    }

    @Test func largeBodiesAreWrittenAsTheSocketDrains() throws {
        let (server, port) = try Self.makeServer()
        defer { server.stop() }
        let client = try TestClient(port: port)
        client.send("GET /big HTTP/1.1\r\nHost: h\r\n\r\nGET /after HTTP/1.1\r\nHost: h\r\n\r\n")
        let big = try #require(client.readResponse())
        #expect(big.body.count == 4 << 20 && big.body.allSatisfy { $0 == 7 })
        #expect(client.readResponse()?.text == "GET /after  0")
    }

    /// A client that requests a 64 MiB body five times and never reads: the
    /// server holds the one shared body and what the socket has not taken, not
    /// a copy per response.
    @Test func aClientThatStopsReadingDoesNotGrowServerMemory() throws {
        let huge = [UInt8](repeating: 1, count: 64 << 20)
        let server = HTTPServer(configuration: HTTPServerConfiguration()) { _, responder in
            responder.respond(HTTPResponse(status: 200, body: huge))
        }
        let port = try server.listen(ListenAddress.inet(host: "127.0.0.1", port: 0))
        defer { server.stop() }
        func residentBytes() -> Int {
            let fields = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8))?.split(separator: " ") ?? []
            return (fields.count > 1 ? Int(fields[1]) ?? 0 : 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
        }
        let before = residentBytes()
        let client = try TestClient(port: port)
        client.send(String(repeating: "GET /huge HTTP/1.1\r\nHost: h\r\n\r\n", count: 5))
        #expect(eventually { server.statistics.requestsActive == 1 })
        // Time for a wrong copy of the body to be made, if the server made one: memory is measured after it.
        usleep(500_000)
        if dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") == nil {
            // Under 64 MiB: one copy of the body would cross it. Other suites run
            // in this process at the same time (an animation test's canvas is tens of
            // MiB for a moment), so the margin below one copy is theirs, and a
            // reading is taken again until theirs is gone; copies would stay.
            #expect(eventually(10) { residentBytes() - before < 60 << 20 },
                    "grew by \((residentBytes() - before) >> 20) MiB")
        } else {
            // AddressSanitizer keeps freed memory resident (its quarantine) and
            // adds shadow pages, so RSS says nothing here: the server's own
            // ledger of queued response bytes must hold one response at most.
            #expect(server.statistics.pendingResponseBytes <= (64 << 20) + 4096,
                    "queued \(server.statistics.pendingResponseBytes) bytes")
        }
        #expect(server.statistics.requestsTotal <= 1, "later responses wait for the first to drain")
        _ = client
    }

    @Test func unixAndIPv6Listeners() throws {
        let (server, _) = try Self.makeServer()
        defer { server.stop() }
        let path = NSTemporaryDirectory() + "thumbd-\(UUID().uuidString.prefix(8)).sock"
        defer { unlink(path) }
        try server.listen(ListenAddress.unix(path: path))
        let u = try TestClient(unixPath: path)
        u.send("GET /u HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(u.readResponse()?.text == "GET /u  0")
        let port6 = try server.listen(ListenAddress.inet(host: "::1", port: 0))
        let v6 = try TestClient(port: port6, host: "::1")
        v6.send("GET /six HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(v6.readResponse()?.text == "GET /six  0")
    }

    @Test func listenAddressesParseAndSocketActivationChecksThePid() {
        #expect(ListenAddress("127.0.0.1:8080") == .inet(host: "127.0.0.1", port: 8080))
        #expect(ListenAddress("[::1]:9000") == .inet(host: "::1", port: 9000))
        #expect(ListenAddress("unix:/run/t.sock") == .unix(path: "/run/t.sock"))
        #expect(ListenAddress("nope") == nil && ListenAddress("1.2.3.4:99999") == nil && ListenAddress("unix:") == nil)
        #expect(ListenAddress.inherited(listenFDs: "1", listenPID: "42", pid: 42) == .inherited(fd: 3))
        #expect(ListenAddress.inherited(listenFDs: "1", listenPID: "41", pid: 42) == nil)
        #expect(ListenAddress.inherited(listenFDs: nil, listenPID: "42", pid: 42) == nil)
    }

    @Test func drainFinishesInFlightClosesIdleAndStopsAccepting() throws {
        let (server, port) = try Self.makeServer()
        defer { server.stop() }
        let idle = try TestClient(port: port)
        idle.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(idle.readResponse()?.status == 200)
        // The idle request counts as active until its write completes, which may
        // be after the client read it: wait for that first, or the check below
        // could see it instead of the slow one and drain before /slow is parsed.
        #expect(eventually { server.statistics.requestsActive == 0 })
        let busy = try TestClient(port: port)
        busy.send("GET /slow HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(eventually { server.statistics.requestsActive == 1 })
        let done = DispatchSemaphore(value: 0)
        server.drain(deadline: 5) { done.signal() }
        #expect(server.isDraining)
        #expect(idle.isClosedByPeer())
        let r = try #require(busy.readResponse())
        #expect(r.text == "slow" && r.headers["connection"] == "close")
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(throws: (any Error).self) { try TestClient(port: port) }
    }
}
