import Foundation
import Glibc
import Testing
import ThumbTestSupport

/// The real `thumbd` binary under a fake systemd (Configuration.md, CommandLine.md and ServiceLife.md): notifications on
/// a test-owned `NOTIFY_SOCKET`, the watchdog, SIGHUP reloads that keep
/// connections, socket activation on an inherited fd 3, and the admin token and
/// URL signing seen from outside. Every daemon is SIGKILLed and reaped by a
/// `defer`, even when an expectation fails; every wait is bounded.
@Suite(.serialized) struct LifecycleTests {
    /// Port 1 on loopback: validation must refuse or pass this before any fetch,
    /// and the fetch itself is refused (403 forbidden_source) since loopback
    /// sources are not allowed by default. Port 1 is never contacted.
    static let loopbackSource = "url=http%3A%2F%2F127.0.0.1%3A1%2Fa.jpg"
    static let sized32 = "/thumbnail?\(loopbackSource)&w=32&h=32"

    static func config(port: UInt16, _ box: DaemonSandbox, _ extra: String = "") -> String {
        #"{"listen": "127.0.0.1:\#(port)", "diskStore": {"path": "\#(box.storePath)"}, "log": {"accessLog": false}"#
            + (extra.isEmpty ? "" : ", " + extra) + "}"
    }

    /// Starts `thumbd --config` with `NOTIFY_SOCKET` and waits (≤ 10 s) for `READY=1`.
    /// The caller must `defer { daemon.stop() }` at once.
    private func start(_ box: DaemonSandbox, _ notify: NotifySocket, environment: [String: String] = [:],
                       listenFD: Int32? = nil) throws -> DaemonProcess {
        let daemon = try DaemonProcess(config: box.configPath,
                                       environment: environment.merging(["NOTIFY_SOCKET": notify.path]) { $1 },
                                       listenFD: listenFD)
        let ready = notify.waitFor("READY=1", timeout: 10, abort: { !daemon.isRunning })
        if !ready {
            daemon.stop()
            try #require(ready, "no READY=1 within 10 s; daemon \(daemon.exit?.description ?? "still running"); notify: [\(notify.transcript)]; stderr: \(daemon.stderr)")
        }
        return daemon
    }

    /// SIGTERM, then `STOPPING=1` and exit status 0 within the 10 s drain bound.
    private func terminate(_ daemon: DaemonProcess, _ notify: NotifySocket, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(daemon.signal(SIGTERM), "daemon already gone before SIGTERM: \(daemon.exit?.description ?? "?")", sourceLocation: sourceLocation)
        #expect(notify.waitFor("STOPPING=1", timeout: 5, abort: { !daemon.isRunning }),
                "no STOPPING=1 after SIGTERM; notify: [\(notify.transcript)]", sourceLocation: sourceLocation)
        let exit = daemon.waitForExit(timeout: 12)
        #expect(exit == .exited(0), "after SIGTERM: \(exit?.description ?? "still running after 12 s"); stderr: \(daemon.stderr)",
                sourceLocation: sourceLocation)
    }

    /// The 400 that `output.allowedSizes` gives before any fetch.
    private func expectSizeRefused(_ r: HTTPConnection.Response?, _ when: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(r?.status == 400, "\(when): \(r?.description ?? "no answer on the kept-alive connection")", sourceLocation: sourceLocation)
        #expect(r?.errorCode == "bad_request", "\(when): \(r?.description ?? "-")", sourceLocation: sourceLocation)
        #expect(r?.errorMessage?.lowercased().contains("size") == true,
                "\(when): the 400 must come from allowedSizes: \(r?.description ?? "-")", sourceLocation: sourceLocation)
    }

    // MARK: a. READY / STOPPING / exit 0

    @Test func readyOnceListeningThenStoppingOnSigtermAndExitZero() throws {
        let box = try DaemonSandbox("ready")
        let port = Loopback.freePort()
        try box.write(Self.config(port: port, box))
        let notify = try NotifySocket()
        let daemon = try start(box, notify)
        defer { daemon.stop() }

        // READY=1 means listening: the very first connection is answered.
        let c = try #require(HTTPConnection(port: port, timeout: 2), "port \(port) refused right after READY=1")
        let health = c.request("GET", "/healthz")
        #expect(health?.status == 200 && health?.text == "ok", "\(health?.description ?? "no answer")")
        c.close()

        terminate(daemon, notify)
        let readies = notify.received.filter { $0.line == "READY=1" }.count
        #expect(readies == 1, "READY=1 sent \(readies) times: [\(notify.transcript)]")
    }

    // MARK: b. Watchdog

    @Test func watchdogPingsEveryHalfWatchdogUsec() throws {
        let box = try DaemonSandbox("wd")
        let port = Loopback.freePort()
        try box.write(Self.config(port: port, box))
        let notify = try NotifySocket()
        // No WATCHDOG_PID: systemd's sd_watchdog_enabled() accepts it missing.
        let daemon = try start(box, notify, environment: ["WATCHDOG_USEC": "2000000"])
        defer { daemon.stop() }

        let readyAt = notify.received.last { $0.line == "READY=1" }?.at ?? 0
        let windowEnd = readyAt + 3.5
        for _ in 0..<1000 where notify.elapsed < windowEnd {
            _ = notify.nextMessage(timeout: max(0, min(0.25, windowEnd - notify.elapsed)))
        }
        let pings = notify.received.filter { $0.line == "WATCHDOG=1" && $0.at <= windowEnd }.map(\.at)
        #expect(pings.count >= 2, "WATCHDOG=1 × \(pings.count) within 3.5 s of READY=1 with WATCHDOG_USEC=2000000; notify: [\(notify.transcript)]")
        let gaps = zip(pings.dropFirst(), pings).map { $0 - $1 }
        #expect(gaps.allSatisfy { (0.5...1.6).contains($0) },
                "WATCHDOG=1 every WATCHDOG_USEC/2 = 1 s: gaps \(gaps.map { String(format: "%.2f", $0) })")
        #expect(daemon.isRunning, "\(daemon.exit?.description ?? "")")
        terminate(daemon, notify)
    }

    @Test func noWatchdogPingsWithoutWatchdogUsec() throws {
        let box = try DaemonSandbox("nowd")
        let port = Loopback.freePort()
        try box.write(Self.config(port: port, box))
        let notify = try NotifySocket()
        let daemon = try start(box, notify)
        defer { daemon.stop() }
        let end = notify.elapsed + 1.5
        for _ in 0..<1000 where notify.elapsed < end {
            _ = notify.nextMessage(timeout: max(0, min(0.25, end - notify.elapsed)))
        }
        #expect(!notify.received.contains { $0.line == "WATCHDOG=1" }, "WATCHDOG=1 without WATCHDOG_USEC: [\(notify.transcript)]")
        terminate(daemon, notify)
    }

    // MARK: c. SIGHUP reload keeps connections

    /// A daemon whose only allowed size is 64x64, a kept-alive connection to it,
    /// and proof on that connection that 32x32 is refused. The caller must
    /// `defer` stopping the daemon and closing the connection at once.
    private func startWith64x64Rule(_ name: String) throws
        -> (DaemonSandbox, UInt16, NotifySocket, DaemonProcess, HTTPConnection) {
        let box = try DaemonSandbox(name)
        let port = Loopback.freePort()
        try box.write(Self.config(port: port, box, #""output": {"allowedSizes": ["64x64"]}"#))
        let notify = try NotifySocket()
        let daemon = try start(box, notify)
        guard let c = HTTPConnection(port: port) else {
            daemon.stop()
            throw POSIXError(.ECONNREFUSED)
        }
        expectSizeRefused(c.request("GET", Self.sized32), "before reload, 32x32 with allowedSizes [64x64]")
        return (box, port, notify, daemon, c)
    }

    @Test func sighupReloadAppliesNewRulesOnTheSameConnection() throws {
        let (box, port, notify, daemon, c) = try startWith64x64Rule("hup")
        defer { daemon.stop() }
        defer { c.close() }
        let localPort = c.localPort

        try box.write(Self.config(port: port, box, #""output": {"allowedSizes": ["32x32"]}"#))
        daemon.signal(SIGHUP)
        let reloading = notify.waitFor("RELOADING=1", timeout: 5, abort: { !daemon.isRunning })
        try #require(daemon.isRunning, "daemon did not survive SIGHUP: \(daemon.exit?.description ?? "?"); stderr: \(daemon.stderr)")
        #expect(reloading, "no RELOADING=1 after SIGHUP; notify: [\(notify.transcript)]")
        // Without RELOADING=1 the wait above consumed everything: no second 5 s wait.
        let readyAgain = reloading && notify.waitFor("READY=1", timeout: 5, abort: { !daemon.isRunning })
        #expect(readyAgain, "no READY=1 after RELOADING=1; notify: [\(notify.transcript)]")

        // Same connection, new rule: validation passes; the loopback source is then refused.
        let after = c.request("GET", Self.sized32)
        #expect(after?.status == 403 && after?.errorCode == "forbidden_source",
                "after reload to [32x32], on the kept-alive connection: \(after?.description ?? "no answer (connection dropped?)")")
        let health = c.request("GET", "/healthz")
        #expect(health?.status == 200, "/healthz on the same connection after reload: \(health?.description ?? "no answer")")
        #expect(c.isOpen && c.answered == 3 && c.localPort == localPort, "one connection for all three requests")
        c.close()
        terminate(daemon, notify)
    }

    // MARK: d. SIGHUP with a bad file keeps the old config

    @Test func sighupWithABrokenFileKeepsServingTheOldConfig() throws {
        let (box, port, notify, daemon, c) = try startWith64x64Rule("hupbad")
        defer { daemon.stop() }
        defer { c.close() }

        // 1. Not JSON at all (truncated).
        var mark = daemon.stderrMark
        try box.write(#"{"output": {"allowedSizes": ["32x32"]"#)
        daemon.signal(SIGHUP)
        let loggedJSON = daemon.waitForStderr(after: mark, timeout: 5) { $0.lowercased().contains("reload") }
        try #require(daemon.isRunning, "daemon did not survive SIGHUP with invalid JSON: \(daemon.exit?.description ?? "?"); stderr: \(daemon.stderr)")
        #expect(loggedJSON, "a failed reload is logged with the word 'reload'; stderr since SIGHUP: \(daemon.stderr(after: mark))")
        let health1 = c.request("GET", "/healthz")
        #expect(health1?.status == 200, "\(health1?.description ?? "no answer")")
        expectSizeRefused(c.request("GET", Self.sized32), "after a reload with invalid JSON, the old [64x64] rule holds")

        // 2. Valid JSON with an unknown key: named in the log.
        mark = daemon.stderrMark
        try box.write(Self.config(port: port, box, #""output": {"allowedSize": ["32x32"]}"#))
        daemon.signal(SIGHUP)
        let loggedKey = daemon.waitForStderr(after: mark, timeout: 5) { $0.contains("output.allowedSize") }
        try #require(daemon.isRunning, "daemon did not survive SIGHUP with an unknown key: \(daemon.exit?.description ?? "?")")
        #expect(loggedKey, "the unknown key is named; stderr since SIGHUP: \(daemon.stderr(after: mark))")
        let health2 = c.request("GET", "/healthz")
        #expect(health2?.status == 200, "\(health2?.description ?? "no answer")")
        expectSizeRefused(c.request("GET", Self.sized32), "after a reload with an unknown key, the old [64x64] rule holds")
        #expect(c.isOpen && c.answered == 5, "the connection survived both failed reloads")

        // Any READY=1 after start-up must close a RELOADING=1.
        _ = notify.nextMessage(timeout: 0.2)   // drain what is in flight
        var sequence = notify.received.map(\.line).filter { $0 == "READY=1" || $0 == "RELOADING=1" }
        if sequence.first == "READY=1" { sequence.removeFirst() }
        var open = false
        for line in sequence {
            if line == "RELOADING=1" { open = true } else {
                #expect(open, "READY=1 without a RELOADING=1 before it: [\(notify.transcript)]")
                open = false
            }
        }
        c.close()
        terminate(daemon, notify)
    }

    // MARK: e. Socket activation

    @Test func socketActivationServesOnTheInheritedFD3() throws {
        let box = try DaemonSandbox("sock")
        let listener = try #require(Loopback.listeningSocket(), "cannot make a listening socket")
        var listenerOpen = true
        defer { if listenerOpen { close(listener.fd) } }
        var configured = Loopback.freePort()
        for _ in 0..<10 where configured == listener.port { configured = Loopback.freePort() }
        try box.write(Self.config(port: configured, box))
        let notify = try NotifySocket()
        let daemon = try start(box, notify, listenFD: listener.fd)
        defer { daemon.stop() }
        close(listener.fd)   // the child holds its own copy at fd 3
        listenerOpen = false

        let c = try #require(HTTPConnection(port: listener.port, timeout: 2), "inherited port \(listener.port) not served")
        let health = c.request("GET", "/healthz")
        #expect(health?.status == 200 && health?.text == "ok", "/healthz on the inherited socket: \(health?.description ?? "no answer")")
        c.close()
        #expect(!Loopback.isListening(configured), "the config's own listen (\(configured)) must be ignored under socket activation")
        terminate(daemon, notify)
    }

    // MARK: f. Admin token and signing, from outside

    /// SIG of API.md § Signing: base64url (unpadded) HMAC-SHA256 of `target`, keyed with `key`, via openssl.
    static func signature(_ target: String, key: String) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", #"printf %s "$1" | openssl dgst -sha256 -hmac "$2" -binary | base64 | tr '+/' '-_' | tr -d '=\n'"#,
                       "sh", target, key]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test func adminTokenAndSignatureAreCheckedByTheBinary() throws {
        // Known answer (computed independently): a wrong helper would blame the daemon.
        let probe = try Self.signature("/thumbnail?url=x", key: "k3y")
        try #require(probe == "hYI45EppvnZx9ouqWYxSYZ5MZF1QCIhbDXK0SvawB58", "openssl HMAC helper broken: '\(probe)'")

        let box = try DaemonSandbox("sec")
        let port = Loopback.freePort()
        try box.write(Self.config(port: port, box, #""security": {"adminToken": "t0ken", "signingKey": "k3y"}"#))
        let notify = try NotifySocket()
        let daemon = try start(box, notify)
        defer { daemon.stop() }

        // A fresh connection per request: error answers may close, that is not under test here.
        func get(_ target: String, _ headers: [String: String] = [:]) -> HTTPConnection.Response? {
            guard let c = HTTPConnection(port: port) else { return nil }
            defer { c.close() }
            return c.request("GET", target, headers: headers)
        }

        let anonymous = get("/stats")
        #expect(anonymous?.status == 401 && anonymous?.errorCode == "unauthorized", "/stats without a token: \(anonymous?.description ?? "no answer")")
        let wrongToken = get("/stats", ["Authorization": "Bearer nope"])
        #expect(wrongToken?.status == 401 && wrongToken?.errorCode == "unauthorized", "/stats with a wrong token: \(wrongToken?.description ?? "no answer")")
        let admin = get("/stats", ["Authorization": "Bearer t0ken"])
        #expect(admin?.status == 200 && admin?.json?["requests"] != nil, "/stats with the token: \(admin?.description ?? "no answer")")
        let health = get("/healthz")
        #expect(health?.status == 200, "/healthz is not an admin endpoint: \(health?.description ?? "no answer")")

        let target = "/thumbnail?\(Self.loopbackSource)&w=32"
        let unsigned = get(target)
        #expect(unsigned?.status == 403 && unsigned?.errorCode == "bad_signature", "unsigned: \(unsigned?.description ?? "no answer")")
        let wrong = get(target + "&sig=" + (try Self.signature(target, key: "other")))
        #expect(wrong?.status == 403 && wrong?.errorCode == "bad_signature", "signed with another key: \(wrong?.description ?? "no answer")")
        let sig = try Self.signature(target, key: "k3y")
        #expect(sig.count == 43, "HMAC-SHA256 is 43 base64url characters unpadded: \(sig)")
        let signed = get(target + "&sig=" + sig)
        #expect(signed?.status == 403 && signed?.errorCode == "forbidden_source",
                "signed correctly: the signature passes and the loopback source is refused: \(signed?.description ?? "no answer")")

        terminate(daemon, notify)
    }

    // MARK: g. journald priorities and the access log

    @Test func underJournaldLinesCarryPrioritiesAndEachRequestIsLogged() throws {
        let box = try DaemonSandbox("journal")
        let port = Loopback.freePort()
        try box.write(#"{"listen": "127.0.0.1:\#(port)", "diskStore": {"path": "\#(box.storePath)"}, "log": {"accessLog": true}}"#)
        let notify = try NotifySocket()
        let daemon = try start(box, notify, environment: ["JOURNAL_STREAM": "8:12345"])
        defer { daemon.stop() }
        let c = try #require(HTTPConnection(port: port))
        defer { c.close() }
        #expect(c.request("GET", "/healthz")?.status == 200)
        #expect(c.request("GET", "/nope")?.status == 404)
        // A decoded %0A in the path must not forge a second (emergency-priority) line.
        #expect(c.request("GET", "/a%0A%3C0%3Eforged")?.status == 404)
        // method, path, status, bytes, ms, X-Cache ("-" when the response has none), at info priority <6>.
        let logged = daemon.waitForStderr(after: 0, timeout: 5) {
            $0.contains("<6>GET /healthz 200 2 ") && $0.contains("<6>GET /nope 404 ") && $0.contains("<6>GET /a\\x0a<0>forged 404 ")
        }
        #expect(logged, "stderr: \(daemon.stderr)")
        let lines = daemon.stderr.split(separator: "\n")
        #expect(!lines.isEmpty && lines.allSatisfy { $0.hasPrefix("<") }, "every line has a priority: \(daemon.stderr)")
        #expect(lines.contains { $0.hasPrefix("<6>GET /healthz 200 2 ") && $0.hasSuffix("ms -") })
        c.close()
        terminate(daemon, notify)
    }
}
