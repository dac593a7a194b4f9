import Foundation
import Synchronization

/// One worker process and the daemon's end of its channel. Used by one
/// render thread at a time (checked out of `SandboxEngine`'s pool).
final class Worker: Sendable {
    let process: WorkerProcess
    let channel: WorkerChannel
    /// Its stdout and stderr, drained into the daemon's log.
    let output: WorkerOutput
    /// Gives the worker's process slot back once it has been reaped (`SandboxEngine`).
    private let release: @Sendable () -> Void
    private let released = Atomic<Bool>(false)

    private init(process: WorkerProcess, channel: WorkerChannel, output: WorkerOutput,
                 release: @escaping @Sendable () -> Void) {
        self.process = process
        self.channel = channel
        self.output = output
        self.release = release
    }

    /// A worker dropped without `end()` (a pool being torn down) is still
    /// killed, reaped and given back.
    deinit { end() }

    /// How long a new worker may take to load its libraries and say `ready`
    /// (measured: about 30 ms; Isolation.md § Workers).
    static let startTimeout = Duration.seconds(10)

    /// What a worker's environment keeps of the daemon's: only what the
    /// dynamic loader and a sanitizer build need. Never the rest, where an
    /// operator's secrets may be.
    static let inheritedVariables = ["LD_LIBRARY_PATH", "LD_PRELOAD", "ASAN_OPTIONS", "LSAN_OPTIONS",
                                     "TSAN_OPTIONS", "UBSAN_OPTIONS"]

    static var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { inheritedVariables.contains($0.key) }
        // A crashing worker is an expected event: no backtracer (it would try to execve one).
        environment["SWIFT_BACKTRACE"] = "enable=no"
        // One job at a time on one thread: one malloc arena, so freed memory is reused.
        environment["MALLOC_ARENA_MAX"] = "1"
        // A job's buffers come back for the next job instead of being returned to the
        // kernel and faulted in again, zeroed, each time (the daemon's own threads keep
        // theirs while busy too); an idle worker trims them (WorkerMain).
        environment["MALLOC_TRIM_THRESHOLD_"] = String(256 << 20)
        environment["MALLOC_MMAP_THRESHOLD_"] = String(64 << 20)
        // A sanitizer build's worker dies of its signal like any other, rather than
        // reporting it and exiting 1: the daemon tells a crash by the signal.
        for name in ["ASAN_OPTIONS", "TSAN_OPTIONS"] {
            let own = environment[name].map { $0 + ":" } ?? ""
            environment[name] = own + "handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigill=0:handle_sigfpe=0"
        }
        return environment
    }

    /// Spawns a worker from `executable` and waits for its `ready`. `identity`:
    /// whom a root daemon's worker becomes (nil: it stays who the daemon is,
    /// which only a non-root daemon may ask). `release` runs once the worker's
    /// process has been reaped, also when the spawn fails.
    static func spawn(executable: String, identity: WorkerIdentity?, log: @escaping @Sendable (String) -> Void,
                      release: @escaping @Sendable () -> Void) throws(SandboxError) -> Worker {
        let channels: (WorkerChannel, WorkerChannel)
        let output: WorkerOutput
        let process: WorkerProcess
        do throws(SandboxError) {
            channels = try WorkerChannel.pair()
            output = try WorkerOutput(log: log)
        } catch {
            release()
            throw error
        }
        do throws(SandboxError) {
            var arguments = [WorkerMain.subcommand, String(getpid())]
            if let identity { arguments.append(identity.argument) }
            process = try WorkerProcess.spawn(path: executable, arguments: arguments, environment: environment,
                                              channel: channels.1, output: output.writeEnd.rawValue ?? -1,
                                              identity: identity)
        } catch {
            // No worker holds the pipe: the output's source would wait for an end that never comes.
            output.writeEnd.close()
            output.finish()
            release()
            throw error
        }
        output.pid.store(process.pid, ordering: .relaxed)
        let mine = channels.0
        channels.1.close()
        output.writeEnd.close()
        let worker = Worker(process: process, channel: mine, output: output, release: release)
        do throws(SandboxError) {
            let frame = try mine.receive(timeout: startTimeout, maxBytes: WorkerWire.maxFrameBytes)
            guard case .ready = try WorkerWire.decode(WorkerReply.self, frame.bytes) else {
                throw SandboxError.system("a worker greeted with something else", EPROTO)
            }
        } catch {
            worker.end()
            throw error
        }
        return worker
    }

    /// Caps the worker's memory for the job, then sends it.
    func start(_ frame: [UInt8], descriptor: Int32?, memoryCap: Int?) throws(SandboxError) {
        output.jobStarted()
        if let memoryCap { try process.setMemoryCap(bytes: UInt64(memoryCap)) }
        try channel.send(frame, fds: descriptor.map { [$0] } ?? [])
    }

    enum Outcome {
        case answered(WorkerReply, [OwnedFileDescriptor])
        /// No answer in time: the worker has been killed and reaped.
        case hung
        /// The worker closed its channel mid-job: it died (reaped); how.
        case died(String)
        /// It died of SIGSYS: its seccomp filter stopped a call only an attack makes.
        case filtered(String)
        /// It said an allocation failed (the Swift runtime's fatal error, or the
        /// C++ new-handler of `thumbd_worker_report_allocation_failures`), then died.
        case outOfMemory(String)
        /// An answer that could not be read: the worker has been ended.
        case broken(String)
    }

    /// Waits for the job's answer until `timeout`.
    func finish(timeout: Duration) -> Outcome {
        do {
            let frame = try channel.receive(timeout: timeout, maxBytes: WorkerWire.maxFrameBytes)
            return .answered(try WorkerWire.decode(WorkerReply.self, frame.bytes), frame.fds)
        } catch .timedOut {
            end()
            return .hung
        } catch .closed {
            let ending = try? process.waitForExit()
            let allocationFailure = output.allocationFailure()
            retire()
            if case .signaled(SIGSYS)? = ending { return .filtered(Self.describe(ending)) }
            if let said = allocationFailure { return .outOfMemory(said) }
            return .died(Self.describe(ending))
        } catch {
            end()
            return .broken("\(error)")
        }
    }

    /// Kills and reaps the worker and closes the channel (idempotent).
    func end() {
        channel.close()
        process.kill()
        _ = try? process.waitForExit()
        retire()
    }

    /// After the reap: the channel closed, the last output read, the slot given back (once).
    private func retire() {
        channel.close()
        output.finish()
        if !released.exchange(true, ordering: .acquiringAndReleasing) { release() }
    }

    static func describe(_ ending: WorkerProcess.Ending?) -> String {
        switch ending {
        case .signaled(SIGSYS)?: "was stopped by its seccomp filter (signal \(SIGSYS), SIGSYS)"
        case .signaled(let signal)?: "died of signal \(signal) (\(String(cString: strsignal(signal))))"
        case .exited(let status)?: "exited with status \(status)"
        case nil: "ended"
        }
    }
}
