import Foundation
import Glibc
import Testing
import ThumbTestSupport

/// The sandbox against code that is already hostile (SPEC §16, Isolation.md): a stand-in for a
/// decoder taken over by a crafted image (Fixtures/hostile-decoder.c) is preloaded into a real
/// thumbd daemon, whose workers inherit it, and acts when a PNG of a chosen width is decoded. What
/// it tries must fail inside the worker, and the daemon must serve on.
@Suite(.serialized) struct HostileWorkerTests {
    /// Widths of the PNGs that trigger each action (HostileDecoder.plan).
    enum Trigger: Int, CaseIterable {
        case open = 901, statPath, socket, fork, cloneProcess, clone3, thread, rlimit, dumpable, truncateOutput
        case spam = 921
        case unshare = 931, fanotify, execve, ptrace, killParent, setuid, sigsysHandler
        case hang = 951

        var action: String {
            switch self {
            case .open: "open"
            case .statPath: "stat-path"
            case .socket: "socket"
            case .fork: "fork"
            case .cloneProcess: "clone-process"
            case .clone3: "clone3"
            case .thread: "thread"
            case .rlimit: "rlimit"
            case .dumpable: "dumpable"
            case .truncateOutput: "truncate-output"
            case .spam: "spam 100000"
            case .unshare: "unshare"
            case .fanotify: "fanotify"
            case .execve: "execve"
            case .ptrace: "ptrace"
            case .killParent: "kill-parent"
            case .setuid: "setuid"
            case .sigsysHandler: "sigsys-handler"
            case .hang: "hang"
            }
        }
    }

    @Test func callsOffTheAllowListFailWithENOSYSAndTheJobGoesOn() throws {
        try HostileDaemon.with { daemon in
            // Each reports its result, then the decode goes on and the thumbnail is served.
            let expected: [(Trigger, String)] = [
                (.open, "open -> -1 errno 38"), (.statPath, "stat-path -> -1 errno 38"),
                (.socket, "socket -> -1 errno 38"), (.fork, "fork -> -1 errno 38"),
                (.cloneProcess, "clone-process -> -1 errno 38"), (.clone3, "clone3 -> -1 errno 38"),
                (.rlimit, "rlimit -> -1 errno 38"), (.dumpable, "dumpable -> -1 errno 38"),
                // A pipe cannot be truncated: the daemon's own log file is out of reach.
                (.truncateOutput, "truncate-output -> -1 errno 22"),
                // Threads are allowed: the decoders' pools need them.
                (.thread, "thread -> 0 errno 0"),
            ]
            for (trigger, line) in expected {
                let mark = daemon.process.stderrMark
                let answer = daemon.thumbnail(trigger)
                #expect(answer?.status == 200, "\(trigger): \(answer?.text ?? "no answer") \(daemon.process.stderr(after: mark))")
                #expect(daemon.process.waitForStderr(after: mark, timeout: 10) { $0.contains("hostile: \(line)") },
                        "\(trigger): \(daemon.process.stderr(after: mark))")
            }
            // fork and clone made nothing: the daemon's only children are its workers, all `thumbd __worker`.
            for child in HostileDaemon.children(of: daemon.process.pid) {
                #expect(HostileDaemon.commandLine(child).contains("__worker"), "\(child)")
            }
            #expect(daemon.process.stderr.contains("thumbd listening"), "the daemon's log was not truncated")
        }
    }

    /// Each attack-only call ends its worker with SIGSYS, after one log line naming the call; the request
    /// gets the crash answer and the daemon goes on serving.
    @Test func attackOnlyCallsKillTheWorkerAndAreLoggedByNumber() throws {
        #if arch(x86_64)
        let numbers: [(Trigger, Int)] = [(.unshare, 272), (.fanotify, 300), (.execve, 59), (.ptrace, 101),
                                         (.killParent, 62), (.setuid, 105), (.sigsysHandler, 13)]
        #else
        let numbers: [(Trigger, Int)] = [(.unshare, 97), (.fanotify, 262), (.execve, 221), (.ptrace, 117),
                                         (.killParent, 129), (.setuid, 146), (.sigsysHandler, 134)]
        #endif
        try HostileDaemon.with { daemon in
            for (trigger, number) in numbers {
                let mark = daemon.process.stderrMark
                let answer = daemon.thumbnail(trigger)
                #expect(answer?.status == 422 && answer?.errorCode == "corrupt_image", "\(trigger): \(answer?.text ?? "none")")
                #expect(answer?.text.contains("seccomp filter") == true, "\(trigger): \(answer?.text ?? "none")")
                #expect(daemon.process.waitForStderr(after: mark, timeout: 10) {
                    $0.contains("thumbd worker: the seccomp filter stopped system call \(number)\n")
                }, "\(trigger): \(daemon.process.stderr(after: mark))")
                #expect(!daemon.process.stderr(after: mark).contains("hostile: \(trigger.action) ->"), "the call returned")
                #expect(daemon.thumbnail(.open)?.status == 200, "served after \(trigger)")
            }
            #expect(daemon.process.isRunning, "the daemon was not signalled")
        }
    }

    /// A worker's output is a pipe the daemon drains: 100 000 lines cost the log at most 20 a job and a
    /// count, and the render is served.
    @Test func aFloodOfWorkerOutputIsBoundedInTheLog() throws {
        try HostileDaemon.with { daemon in
            let mark = daemon.process.stderrMark
            #expect(daemon.thumbnail(.spam)?.status == 200)
            #expect(daemon.process.waitForStderr(after: mark, timeout: 10) { $0.contains("more bytes of output dropped") },
                    "\(daemon.process.stderr(after: mark))")
            let lines = daemon.process.stderr(after: mark).split(separator: "\n")
            let spam = lines.filter { $0.contains("hostile spam line") }.count
            // One request runs at most three jobs on the PNG (probe, facts, render), 20 lines each.
            #expect(spam >= 20 && spam <= 60, "\(spam) spam lines in the log")
        }
    }

    /// What a worker of a root daemon is (read from outside, in /proc): `sandbox.user`'s ids, no
    /// supplementary group, no capability in any set, no new privileges, the filter in force, a
    /// process group of its own, and stdout and stderr on a pipe.
    @Test func aWorkerHasNoPrivilegeAndNoneOfTheDaemonsDescriptors() throws {
        try HostileDaemon.with { daemon in
            #expect(daemon.thumbnail(.thread)?.status == 200)
            let workers = HostileDaemon.children(of: daemon.process.pid)
            try #require(!workers.isEmpty)
            let root = geteuid() == 0
            for worker in workers {
                let status = (try? String(contentsOfFile: "/proc/\(worker)/status", encoding: .utf8)) ?? ""
                func field(_ name: String) -> String {
                    status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                        .map { $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces) } ?? "?"
                }
                let uid = root ? "65534" : String(getuid())
                #expect(field("Uid") == [uid, uid, uid, uid].joined(separator: "\t"), "\(worker): \(field("Uid"))")
                #expect(field("Gid").split(separator: "\t").allSatisfy { root ? $0 == "65534" : $0 == String(getgid()) }, "\(worker): \(field("Gid"))")
                if root { #expect(field("Groups") == "", "\(worker): groups \(field("Groups"))") }
                for set in ["CapInh", "CapPrm", "CapEff", "CapAmb"] + (root ? ["CapBnd"] : []) {
                    #expect(field(set) == "0000000000000000", "\(worker): \(set) \(field(set))")
                }
                #expect(field("NoNewPrivs") == "1")
                #expect(field("Seccomp") == "2")
                let stat = (try? String(contentsOfFile: "/proc/\(worker)/stat", encoding: .utf8)) ?? ""
                let afterName = stat.split(separator: ")").last?.split(separator: " ") ?? []
                #expect(afterName.count > 3 && afterName[2] == String(worker), "leads its own group: \(stat)")
                for fd in [1, 2] {
                    let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(worker)/fd/\(fd)")) ?? ""
                    #expect(target.hasPrefix("pipe:"), "\(worker) fd \(fd) is \(target)")
                }
            }
        }
    }

    /// Hung decoders killed at the deadline, over and over: at no moment do more worker processes exist
    /// than `workers`, every answer comes within the deadline and a margin, a normal render beside them
    /// is served, and a daemon killed outright takes its workers with it.
    @Test func killedWorkersNeverOutnumberTheWorkersSetting() throws {
        try HostileDaemon.with(workers: 2, maxRenderSeconds: 1) { daemon in
            let most = Atomic<Int>(0)
            let sampling = Atomic<Bool>(true)
            let sampler = Thread {
                while sampling.load(ordering: .relaxed) {
                    let count = HostileDaemon.children(of: daemon.process.pid).count
                    if count > most.load(ordering: .relaxed) { most.store(count, ordering: .relaxed) }
                    usleep(2_000)
                }
            }
            sampler.start()
            let answers = Mutex<[(Int, Double)]>([])
            let group = DispatchGroup()
            for round in 0..<6 {
                DispatchQueue.global().async(group: group) {
                    let started = ContinuousClock.now
                    let status = daemon.thumbnail(.hang, variant: "?round=\(round)")?.status ?? 0
                    answers.withLock { $0.append((status, (ContinuousClock.now - started) / .seconds(1))) }
                }
            }
            #expect(group.wait(timeout: .now() + 60) == .success)
            let started = ContinuousClock.now
            #expect(daemon.thumbnail(.open)?.status == 200)
            #expect(ContinuousClock.now - started < .seconds(5), "a normal render after the kills")
            sampling.store(false, ordering: .relaxed)
            while !sampler.isFinished { usleep(1_000) }
            for (status, seconds) in answers.withLock({ $0 }) {
                #expect(status == 422)
                // Each waits for its worker: up to 6 kills of 1 s on 2 workers, plus margins.
                #expect(seconds < 10)
            }
            #expect(most.load(ordering: .relaxed) <= 2, "\(most.load(ordering: .relaxed)) worker processes at once")

            // A daemon that dies leaves nothing behind: its workers die with it (PR_SET_PDEATHSIG).
            let hung = Thread { _ = daemon.thumbnail(.hang, variant: "?last") }
            hung.start()
            var workers: [pid_t] = []
            for _ in 0..<200 where workers.isEmpty {
                workers = HostileDaemon.children(of: daemon.process.pid)
                usleep(10_000)
            }
            daemon.process.signal(SIGKILL)
            _ = daemon.process.waitForExit(timeout: 10)
            #expect(!workers.isEmpty)
            #expect(eventually(5) { workers.allSatisfy { kill($0, 0) != 0 } }, "workers outlived their daemon")
        }
    }
}

import Synchronization

/// A thumbd daemon process with the hostile stand-in preloaded, a loopback origin serving PNGs of
/// each trigger's width, and its log.
final class HostileDaemon: @unchecked Sendable {
    // @unchecked: every field is a constant; DaemonProcess is only read (pid, log) from other threads.
    let process: DaemonProcess
    let port: UInt16
    let origin: TestOrigin

    /// The stand-in, compiled once per test process with the toolchain's clang, and its plan beside it.
    static let library: Result<String, Error> = Result {
        let directory = NSTemporaryDirectory() + "thumbd-hostile-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/hostile-decoder.c").path
        let library = directory + "/libthumbd-hostile.so"
        let compile = Process()
        compile.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        compile.arguments = ["clang", "-shared", "-fPIC", "-O1", "-Wall", "-o", library, source, "-ldl"]
        try compile.run()
        compile.waitUntilExit()
        guard compile.terminationStatus == 0 else { throw POSIXError(.ENOEXEC) }
        let plan = HostileWorkerTests.Trigger.allCases.map { "\($0.rawValue) \($0.action)" }.joined(separator: "\n")
        try Data((plan + "\n").utf8).write(to: URL(fileURLWithPath: directory + "/hostile.plan"))
        return library
    }

    /// A PNG of `width` × 8 grey pixels (stored deflate blocks: no zlib needed to write one).
    static func png(width: Int) -> [UInt8] {
        func crc(_ bytes: [UInt8]) -> UInt32 {
            var c: UInt32 = 0xFFFF_FFFF
            for b in bytes {
                c ^= UInt32(b)
                for _ in 0..<8 { c = (c >> 1) ^ (0xEDB8_8320 & (0 &- (c & 1))) }
            }
            return ~c
        }
        func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 255), UInt8(v >> 8 & 255), UInt8(v & 255)] }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return be(UInt32(data.count)) + body + be(crc(body))
        }
        let height = 8
        var raw: [UInt8] = []
        for _ in 0..<height { raw += [0] + [UInt8](repeating: 128, count: width) }
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in raw { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
        var zlib: [UInt8] = [0x78, 0x01]
        var offset = 0
        while offset < raw.count {
            let n = min(65535, raw.count - offset)
            zlib += [offset + n == raw.count ? 1 : 0, UInt8(n & 255), UInt8(n >> 8), UInt8(~n & 255), UInt8((~n >> 8) & 255)]
            zlib += raw[offset..<offset + n]
            offset += n
        }
        zlib += be(b << 16 | a)
        let header = be(UInt32(width)) + be(UInt32(height)) + [8, 0, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", zlib) + chunk("IEND", [])
    }

    private init(process: DaemonProcess, port: UInt16, origin: TestOrigin) {
        self.process = process
        self.port = port
        self.origin = origin
    }

    static func with(workers: Int = 1, maxRenderSeconds: Int = 10, _ body: (HostileDaemon) throws -> Void) throws {
        let library = try Self.library.get()
        var routes: [String: [UInt8]] = [:]
        for trigger in HostileWorkerTests.Trigger.allCases { routes["/w\(trigger.rawValue).png"] = png(width: trigger.rawValue) }
        let origin = try TestOrigin(extraRoutes: routes)
        defer { origin.stop() }
        let box = try DaemonSandbox("hostile")
        let port = Loopback.freePort()
        try box.write(#"""
            {"listen": "127.0.0.1:\#(port)", "workers": \#(workers), "diskStore": {"path": "\#(box.storePath)"},
             "limits": {"maxRenderSeconds": \#(maxRenderSeconds)},
             "origin": {"allowPrivateNetworks": true}, "log": {"accessLog": false}}
            """#)
        // Beside whatever the run preloads already (the TSan run's mutex shim); a sanitizer runtime
        // must otherwise come first in the list, which a preload changes.
        var environment = ["LD_PRELOAD": ([ProcessInfo.processInfo.environment["LD_PRELOAD"]].compactMap { $0 } + [library])
            .joined(separator: ":")]
        let asan = ProcessInfo.processInfo.environment["ASAN_OPTIONS"].map { $0 + ":" } ?? ""
        environment["ASAN_OPTIONS"] = asan + "verify_asan_link_order=0"
        let process = try DaemonProcess(config: box.configPath, environment: environment)
        defer { process.stop() }
        try #require(process.waitUntilHealthy(port: port), "thumbd did not start: \(process.stderr)")
        try body(HostileDaemon(process: process, port: port, origin: origin))
    }

    func thumbnail(_ trigger: HostileWorkerTests.Trigger, variant: String = "") -> HTTPConnection.Response? {
        guard let connection = HTTPConnection(port: port, timeout: 30) else { return nil }
        defer { connection.close() }
        let url = origin.url("/w\(trigger.rawValue).png\(variant)")
        let encoded = url.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        return connection.request("GET", "/thumbnail?url=\(encoded)&w=64&format=png")
    }

    /// The live children of `pid` (its workers), from /proc.
    static func children(of pid: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid_t($0) }.filter { candidate in
            guard let stat = try? String(contentsOfFile: "/proc/\(candidate)/stat", encoding: .utf8),
                  let fields = stat.split(separator: ")").last?.split(separator: " "), fields.count > 2 else { return false }
            return fields[0] != "Z" && fields[1] == String(pid)
        }
    }

    static func commandLine(_ pid: pid_t) -> String {
        let bytes = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))) ?? Data()
        return String(decoding: bytes.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
    }
}
