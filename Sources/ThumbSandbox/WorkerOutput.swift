import CThumbSandbox
@preconcurrency import Dispatch
import Glibc
import Synchronization

/// A worker's stdout and stderr: a pipe the daemon always drains (SPEC §16),
/// so a worker can neither write into the daemon's own log file (nor truncate
/// it) nor stall on a full pipe. At most `maxLines` lines and `maxBytes` bytes
/// a job reach the log; the rest is counted, and the count logged once when
/// the next job starts or the worker ends.
final class WorkerOutput: @unchecked Sendable {
    // @unchecked: the source is set once in init and used through its own thread-safe calls;
    // the budget is under its Mutex.
    static let maxLines = 20
    static let maxBytes = 4096
    /// One queue for every worker's pipe: a few lines a job at most reach it.
    private static let queue = DispatchQueue(label: "thumbd.worker-output")

    private struct Budget {
        var lines = 0
        var bytes = 0
        var dropped = 0
        /// A line not ended yet (at most `maxBytes` of it are kept).
        var partial: [UInt8] = []
        /// The job's first line saying an allocation failed, logged or dropped (the
        /// runtime's stack trace follows it): how a worker that died said why.
        var allocationFailure: String?
    }

    /// What a worker's output says when an allocation failed: the Swift runtime's
    /// fatal error, libstdc++'s terminate message, and the C++ new-handler's own
    /// line (SPEC §16). A hijacked worker could print them; it would only have its
    /// own request answered 422 image_too_large.
    static let allocationFailureMarks = ["Fatal error: failed to allocate", "Could not allocate memory",
                                         "std::bad_alloc", "thumbd worker: out of memory"]
    static let keptLineBytes = 512

    /// The write end, for the spawn; the daemon closes its copy after it.
    let writeEnd: OwnedFileDescriptor
    private let source: any DispatchSourceRead
    private let budget = Mutex(Budget())
    private let log: @Sendable (String) -> Void
    /// The worker's pid, for the lines' prefix (set once it is spawned).
    let pid = Atomic<Int32>(0)

    /// `log` gets each line, without its line feed, already bounded.
    init(log: @escaping @Sendable (String) -> Void) throws(SandboxError) {
        var fds: [Int32] = [-1, -1]
        let result = thumbd_output_pipe(&fds)
        guard result == 0 else { throw .system("pipe2", -result) }
        writeEnd = OwnedFileDescriptor(taking: fds[1])
        readEnd = fds[0]
        self.log = log
        source = DispatchSource.makeReadSource(fileDescriptor: readEnd, queue: Self.queue)
        // The handler holds this object until the source is cancelled (at the end of the
        // pipe, or by `finish`): Dispatch releases it then, which ends the cycle.
        source.setEventHandler { self.drain(self.readEnd) }
        // The read end lives exactly as long as the source: closed once it is cancelled.
        source.setCancelHandler { [readEnd] in _ = Glibc.close(readEnd) }
        source.activate()
    }

    private let readEnd: Int32

    /// A new job: its own budget of lines; what the last one dropped is logged now.
    func jobStarted() {
        flush(keepingRecent: false)
    }

    /// Logs the unfinished line (within the budget) and the count of what was
    /// dropped; a worker that ended keeps its last lines for `lastLines()`.
    private func flush(keepingRecent: Bool) {
        let (tail, dropped) = budget.withLock { budget -> (String?, Int) in
            let partial = budget.partial
            let failure = budget.allocationFailure ?? Self.allocationFailure(in: partial)
            defer {
                budget = Budget()
                if keepingRecent { budget.allocationFailure = failure }
            }
            if !partial.isEmpty && budget.lines < Self.maxLines && budget.bytes + partial.count <= Self.maxBytes {
                return (String(decoding: partial, as: UTF8.self), budget.dropped)
            }
            return (nil, budget.dropped + partial.count)
        }
        if let tail { emit(tail) }
        if dropped > 0 { emit("(\(dropped) more bytes of output dropped)") }
    }

    /// The line in which the job said an allocation failed, if it did (for a
    /// worker that has ended: everything it wrote is in the pipe, read now).
    func allocationFailure() -> String? {
        Self.queue.sync {
            if !source.isCancelled { drain(readEnd) }
            flush(keepingRecent: true)
            return budget.withLock { $0.allocationFailure }
        }
    }

    private static func allocationFailure<Line: Collection<UInt8>>(in line: Line) -> String? {
        let text = String(decoding: line.prefix(keptLineBytes), as: UTF8.self)
        return allocationFailureMarks.contains { text.contains($0) } ? text : nil
    }

    /// The worker has been reaped (and its group killed): what it wrote is all
    /// in the pipe. Read it, log the count of what was dropped, and stop.
    func finish() {
        Self.queue.async { [self] in
            if !source.isCancelled { drain(readEnd) }
            flush(keepingRecent: true)
            source.cancel()
        }
    }

    private func drain(_ fd: Int32) {
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                take(chunk[0..<n])
                continue
            }
            if n < 0 && errno == EINTR { continue }
            if n == 0 {
                // Every writer has gone: the worker ended. Its last unfinished line and the count.
                flush(keepingRecent: true)
                source.cancel()
            }
            return   // EAGAIN: drained for now
        }
    }

    private func take(_ bytes: ArraySlice<UInt8>) {
        var lines: [String] = []
        budget.withLock { budget in
            var rest = bytes
            while !rest.isEmpty {
                guard let end = rest.firstIndex(of: 0x0A) else {
                    let room = max(0, Self.maxBytes - budget.partial.count)
                    budget.partial += rest.prefix(room)
                    budget.dropped += max(0, rest.count - room)
                    return
                }
                let line = budget.partial + rest[rest.startIndex..<end]
                budget.partial = []
                rest = rest[(end + 1)...]
                if budget.allocationFailure == nil { budget.allocationFailure = Self.allocationFailure(in: line) }
                if budget.lines < Self.maxLines && budget.bytes + line.count <= Self.maxBytes {
                    budget.lines += 1
                    budget.bytes += line.count
                    lines.append(String(decoding: line, as: UTF8.self))
                } else {
                    budget.dropped += line.count + 1
                }
            }
        }
        for line in lines { emit(line) }
    }

    private func emit(_ line: String) {
        log("worker \(pid.load(ordering: .relaxed)): \(line)")
    }
}
