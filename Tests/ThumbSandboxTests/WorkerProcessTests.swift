import CThumbSandbox
import Glibc
import Testing
import ThumbSandbox

/// Spawning, killing and reaping real processes, and the memory cap as the
/// kernel reports and enforces it. The workers here are /bin/sh and friends:
/// what a spawned child sees does not depend on which program it is.
@Suite struct WorkerProcessTests {
    private static let path = ["PATH": "/usr/bin:/bin"]

    @Test func theChildHasTheChannelOnFd3DevNullOnStdinAndNothingElseOfOurs() throws {
        let (daemon, child) = try WorkerChannel.pair()
        // A descriptor this process leaves inheritable, far from 0-4.
        let inheritable = open("/dev/null", O_RDONLY)
        try #require(inheritable >= 0)
        let leaked = fcntl(inheritable, F_DUPFD, 50)
        close(inheritable)
        try #require(leaked >= 50 && fcntl(leaked, F_GETFD) & FD_CLOEXEC == 0)
        defer { close(leaked) }
        setenv("THUMBD_SANDBOX_TEST_SECRET", "s3cret", 1)

        let worker = try WorkerProcess.spawn(
            path: "/bin/sh",
            arguments: ["-c", "echo fd3 >&3; readlink /proc/self/fd/0 >&3; ls /proc/self/fd >&3; "
                              + "echo \"[$THUMBD_SANDBOX_TEST_SECRET][$JOB]\" >&3"],
            environment: Self.path.merging(["JOB": "7"]) { $1 }, channel: child, output: outputSink)
        child.close()   // or the daemon's end never sees the worker's end close

        func line() throws -> String {
            String(decoding: try daemon.receive(timeout: .seconds(10), maxBytes: 4096).bytes, as: UTF8.self)
        }
        #expect(try line() == "fd3\n")
        #expect(try line() == "/dev/null\n")
        let listed = Set(try line().split(separator: "\n").compactMap { Int32($0) })
        #expect(listed.isSuperset(of: [0, 1, 2, 3]))
        #expect(!listed.contains(leaked), "\(listed)")
        // 4 is ls's own handle on /proc/self/fd; nothing of the parent's above it.
        #expect(listed.allSatisfy { $0 <= 4 }, "\(listed)")
        #expect(try line() == "[][7]\n", "exactly the environment given, none of the daemon's")
        #expect(throws: SandboxError.closed) { try daemon.receive(timeout: .seconds(10), maxBytes: 16) }
        #expect(try worker.waitForExit() == .exited(0))
    }

    /// The spawning thread blocks every signal; the child must start with
    /// none blocked (nor ignored, though this process ignores none to check
    /// that with: changing that would hide other suites' SIGPIPE bugs).
    /// Signals 32 and 33 are glibc's own, which posix_spawn sets to SIG_IGN.
    @Test func theChildStartsWithNoSignalBlockedOrIgnored() throws {
        let (_, child) = try WorkerChannel.pair()
        let worker = try WorkerProcess.spawn(path: "/bin/sleep", arguments: ["30"], channel: child, output: outputSink)
        defer { worker.kill() }
        var status = ""
        for _ in 0..<500 {   // at most 5 s, until sleep itself runs
            if readText("/proc/\(worker.pid)/comm") == "sleep\n" { status = readText("/proc/\(worker.pid)/status") ?? ""; break }
            usleep(10_000)
        }
        func mask(_ name: String) -> UInt64? {
            status.split(separator: "\n").first { $0.hasPrefix("\(name):\t") }.flatMap { UInt64($0.dropFirst(name.count + 2), radix: 16) }
        }
        #expect(mask("SigBlk") == 0, "\(status)")
        #expect(try #require(mask("SigIgn")) & 0x7FFF_FFFF == 0, "\(status)")
    }

    @Test func killThenReapReportsSIGKILLAndKillingAgainIsHarmless() throws {
        let (_, child) = try WorkerChannel.pair()
        let worker = try WorkerProcess.spawn(path: "/bin/sleep", arguments: ["30"], channel: child, output: outputSink)
        #expect(try worker.reap() == nil, "still running")
        worker.kill()
        #expect(try worker.waitForExit() == .signaled(SIGKILL))
        #expect(try worker.reap() == .signaled(SIGKILL))
        worker.kill()
        #expect(kill(worker.pid, 0) == -1 && errno == ESRCH, "reaped: no zombie left")
    }

    @Test func anExitCodeIsReportedByTheNonBlockingReap() throws {
        let (_, child) = try WorkerChannel.pair()
        let worker = try WorkerProcess.spawn(path: "/bin/sh", arguments: ["-c", "exit 7"], channel: child, output: outputSink)
        var ending: WorkerProcess.Ending?
        for _ in 0..<1000 where ending == nil {   // at most 10 s
            ending = try worker.reap()
            if ending == nil { usleep(10_000) }
        }
        #expect(ending == .exited(7))
    }

    @Test func aWorkerDroppedUnreapedIsKilledAndReaped() throws {
        let (_, child) = try WorkerChannel.pair()
        var worker: WorkerProcess? = try WorkerProcess.spawn(path: "/bin/sleep", arguments: ["30"], channel: child, output: outputSink)
        let pid = try #require(worker?.pid)
        #expect(kill(pid, 0) == 0)
        worker = nil
        #expect(kill(pid, 0) == -1 && errno == ESRCH)
    }

    @Test func aMissingProgramIsASpawnError() throws {
        let (_, child) = try WorkerChannel.pair()
        #expect(throws: SandboxError.system("posix_spawn", ENOENT)) {
            try WorkerProcess.spawn(path: "/nonexistent/thumbd-worker", arguments: [], channel: child, output: outputSink)
        }
    }

    @Test func spawnsFromManyThreadsAtOnceEachGetTheirOwnChild() async throws {
        let endings = try await withThrowingTaskGroup(of: (Int32, WorkerProcess.Ending).self) { group in
            for code in Int32(1)...8 {
                group.addTask {
                    let (_, child) = try WorkerChannel.pair()
                    let worker = try WorkerProcess.spawn(path: "/bin/sh", arguments: ["-c", "exit \(code)"], channel: child, output: outputSink)
                    return (code, try worker.waitForExit())
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(endings.count == 8 && endings.allSatisfy { $0.value == .exited($0.key) })
    }

    /// PR_SET_PDEATHSIG fires when the thread that created the child exits.
    /// A worker spawned from a thread that then ends (as pool threads do)
    /// must live on: the spawn runs on the library's own long-lived thread.
    @Test func aWorkerOutlivesTheThreadThatAskedForIt() throws {
        let box = SpawnBox()
        var thread = pthread_t()
        let context = Unmanaged.passRetained(box).toOpaque()
        try #require(pthread_create(&thread, nil, { raw in
            let box = Unmanaged<SpawnBox>.fromOpaque(raw!).takeRetainedValue()
            box.spawnAndWaitForPdeathsig()
            return nil
        }, context) == 0)
        pthread_join(thread, nil)
        let worker = try #require(box.worker, "\(String(describing: box.error))")
        usleep(300_000)   // the kernel sends a parent-death signal as the thread ends; give it time
        #expect(try worker.reap() == nil, "still running after its requesting thread ended")
        worker.kill()
        #expect(try worker.waitForExit() == .signaled(SIGKILL))
    }

    @Test func theMemoryCapSetsTheSoftDataLimitAndKeepsTheHardOne() throws {
        let (_, child) = try WorkerChannel.pair()
        let worker = try WorkerProcess.spawn(path: "/bin/sleep", arguments: ["5"], channel: child, output: outputSink)
        defer { worker.kill() }
        try worker.setMemoryCap(bytes: 64 << 20)
        var own = rlimit()
        try #require(getrlimit(__rlimit_resource_t(RLIMIT_DATA.rawValue), &own) == 0)
        let hard = own.rlim_max == rlim_t.max ? "unlimited" : String(own.rlim_max)
        let limits = try #require(readText("/proc/\(worker.pid)/limits"))
        let data = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max data size") })
        #expect(data.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).prefix(2) == ["67108864", hard[...]],
                "\(data)")
        worker.kill()
        #expect(try worker.waitForExit() == .signaled(SIGKILL))
        #expect(throws: SandboxError.system("prlimit", ESRCH)) { try worker.setMemoryCap(bytes: 1 << 20) }
    }

    /// The same 64 MiB string that awk builds uncapped fails under a 32 MiB cap.
    @Test(arguments: [nil, 32 << 20] as [UInt64?])
    func theMemoryCapStopsAnAllocationOverIt(cap: UInt64?) throws {
        let (daemon, child) = try WorkerChannel.pair()
        // Waits for the go (one byte) so the cap is in place before awk allocates.
        let script = "read go <&3; exec awk 'BEGIN { s = \"x\"; for (i = 0; i < 26; i++) s = s s; print length(s) }' >&3 2>/dev/null"
        let worker = try WorkerProcess.spawn(path: "/bin/sh", arguments: ["-c", script], environment: Self.path, channel: child, output: outputSink)
        child.close()
        if let cap { try worker.setMemoryCap(bytes: cap) }
        try daemon.send(Array("\n".utf8))
        if cap == nil {
            #expect(try daemon.receive(timeout: .seconds(30), maxBytes: 64).bytes == Array("67108864\n".utf8))
            #expect(try worker.waitForExit() == .exited(0))
        } else {
            #expect(throws: SandboxError.closed) { try daemon.receive(timeout: .seconds(30), maxBytes: 64) }
            #expect(try worker.waitForExit() == .exited(2), "mawk: out of memory")
        }
    }

    @Test func theMemoryCapIsReportedUnsupportedExactlyUnderASanitizer() {
        let sanitized = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil
            || dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil
        #expect(WorkerProcess.memoryCapSupported == !sanitized)
    }

}

/// Carries a spawn's outcome out of a raw pthread.
private final class SpawnBox: @unchecked Sendable {
    var worker: WorkerProcess?
    var error: SandboxError?

    /// Spawns a sleep that asks for SIGKILL on its parent's death (setpriv
    /// sets it, then execs sleep) and returns once sleep runs, so the
    /// request is armed before this thread ends.
    func spawnAndWaitForPdeathsig() {
        do {
            let (_, child) = try WorkerChannel.pair()
            let spawned = try WorkerProcess.spawn(path: "/usr/bin/setpriv",
                                                  arguments: ["--pdeathsig", "KILL", "/bin/sleep", "30"], channel: child, output: outputSink)
            worker = spawned
            for _ in 0..<500 {   // at most 5 s
                if readText("/proc/\(spawned.pid)/comm") == "sleep\n" { return }
                usleep(10_000)
            }
        } catch {
            self.error = error
        }
    }
}

/// Where the spawned test programs' stdout and stderr go (the spawn needs a
/// descriptor for them; the daemon's is a drained pipe, `WorkerOutput`).
let outputSink: Int32 = open("/dev/null", O_WRONLY | O_CLOEXEC)
