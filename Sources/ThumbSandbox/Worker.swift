import Foundation

/// One worker process and the daemon's end of its channel. Used by one
/// render thread at a time (checked out of `SandboxEngine`'s pool).
final class Worker: Sendable {
    let process: WorkerProcess
    let channel: WorkerChannel

    private init(process: WorkerProcess, channel: WorkerChannel) {
        self.process = process
        self.channel = channel
    }

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

    /// Spawns a worker from `executable` and waits for its `ready`.
    static func spawn(executable: String) throws(SandboxError) -> Worker {
        let (mine, theirs) = try WorkerChannel.pair()
        let process = try WorkerProcess.spawn(path: executable, arguments: [WorkerMain.subcommand, String(getpid())],
                                              environment: environment, channel: theirs)
        theirs.close()
        let worker = Worker(process: process, channel: mine)
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
        if let memoryCap { try process.setMemoryCap(bytes: UInt64(memoryCap)) }
        try channel.send(frame, fds: descriptor.map { [$0] } ?? [])
    }

    enum Outcome {
        case answered(WorkerReply, [OwnedFileDescriptor])
        /// No answer in time: the worker has been killed and reaped.
        case hung
        /// The worker closed its channel mid-job: it died (reaped); how.
        case died(String)
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
            channel.close()
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
    }

    static func describe(_ ending: WorkerProcess.Ending?) -> String {
        switch ending {
        case .signaled(let signal)?: "died of signal \(signal) (\(String(cString: strsignal(signal))))"
        case .exited(let status)?: "exited with status \(status)"
        case nil: "ended"
        }
    }
}
