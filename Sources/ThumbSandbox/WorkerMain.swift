import CThumbSandbox
import Foundation
import ThumbClock
import ThumbCodec
import ThumbImaging
import ThumbRender

/// The worker process (`thumbd __worker DAEMON-PID`, Isolation.md): loads
/// its libraries, enters its sandbox, then runs one job at a time from the
/// channel on descriptor 3 until the daemon closes it.
public enum WorkerMain {
    /// The internal sub-command the daemon spawns its workers with.
    public static let subcommand = "__worker"

    /// Never returns: `_exit` when the channel closes. Exit status 70 when the
    /// worker cannot start (its daemon sees the channel close before `ready`).
    public static func run(arguments: [String]) -> Never {
        // `DAEMON-PID [UID:GID]`: the identity only when the daemon runs as root.
        guard let parentText = arguments.first, let parent = pid_t(parentText) else { fail("no daemon pid given") }
        let identity = arguments.dropFirst().first.flatMap(WorkerIdentity.init(argument:))
        // SPEC §16's order: privileges while single-threaded, then the parent-death signal (a uid
        // change clears it), then the libraries, then the filter.
        if geteuid() == 0 || getuid() == 0 {
            guard let identity else { fail("started as root without a user to run as (sandbox.user)") }
            do {
                try WorkerProcess.dropPrivileges(to: identity)
            } catch {
                fail("cannot drop privileges: \(error)")
            }
        }
        do {
            try WorkerProcess.dieWithParent(parent)
        } catch {
            fail("the daemon has gone (\(error))")
        }
        let channel = WorkerChannel(taking: WorkerChannel.workerDescriptor)
        _ = thumbd_worker_report_allocation_failures()
        warmUp()
        // A job needs its channel, the original, two results and the libraries' few: a
        // worker taken over by a decoder bug cannot hold many more (memfds are memory).
        var files = rlimit(rlim_cur: 64, rlim_max: 64)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files)
        do {
            try WorkerProcess.enterSandbox()
            try channel.send(try WorkerWire.encode(WorkerReply.ready))
        } catch {
            fail("cannot start: \(error)")
        }
        var trimmed = true
        while true {
            let frame: WorkerChannel.Frame
            do {
                // Busy, a job's freed buffers stay for the next (Worker.environment); after a
                // second without work they go back to the kernel, as the daemon's did.
                frame = try channel.receive(timeout: trimmed ? nil : .seconds(1), maxBytes: WorkerWire.maxFrameBytes)
                trimmed = false
            } catch .timedOut {
                FreedHeap.release()
                trimmed = true
                continue
            } catch {
                // The daemon closed the channel (stopping, or retiring this worker): done.
                // `_exit`, not `exit`: nothing at exit may open a file any more.
                _exit(0)
            }
            let (reply, results) = answer(frame)
            // The results stay open until sent: an optimized build ends an object's life at its last use.
            let sent = withExtendedLifetime(results) { () -> Bool in
                do {
                    try channel.send(try WorkerWire.encode(reply), fds: results.compactMap(\.rawValue))
                    return true
                } catch {
                    return false
                }
            }
            if !sent { _exit(0) }
        }
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("thumbd worker: \(message)\n".utf8))
        _exit(70)
    }

    /// One job's reply and the descriptors that go with it (closed once sent).
    /// The worker's clock: its jobs' deadlines are set on it from the time
    /// left that each job brings.
    static let clock = AnyClock(ContinuousClock())

    static func answer(_ frame: WorkerChannel.Frame) -> (WorkerReply, [OwnedFileDescriptor]) {
        let request: WorkerRequest
        do {
            request = try WorkerWire.decode(WorkerRequest.self, frame.bytes)
        } catch {
            return (.failed(.internalError("a job the worker could not read: \(error)")), [])
        }
        let deadline = Deadline(after: request.time, on: clock)
        let budget = JobBudget(deadline: deadline, admittedBytes: request.admittedBytes, tileThreads: request.tileThreads)
        // What the last job freed stays for this one's decode only as far as this one was admitted for it.
        let engine = InProcessEngine { FreedHeap.release(keeping: max(SandboxEngine.keptHeapBytes, $0)) }
        do throws(RenderError) {
            switch request.job {
            case .encode(let width, let height, let encoding):
                guard let fd = frame.fds.first?.rawValue else { throw .internalError("no bitmap to encode") }
                let pixels = try shared { () throws(SandboxError) in
                    try SharedMemory.readSealed(fd, maxBytes: width * height * 4)
                }
                guard pixels.count == width * height * 4 else { throw .internalError("a bitmap of the wrong size") }
                let encoded = try engine.encode(Bitmap(width: width, height: height, pixels: pixels),
                                                encoding: encoding, budget: budget)
                let memory = try shared { () throws(SandboxError) in
                    try SharedMemory.sealed(name: "thumbd-encoded", bytes: encoded.bytes)
                }
                return (.encoded(format: encoded.format, width: encoded.width, height: encoded.height), [memory])
            default:
                guard let fd = frame.fds.first?.take() else { throw .internalError("no original given") }
                let original = OriginalFile(adopting: fd, offset: request.originalOffset,
                                            length: request.originalLength)
                switch request.job {
                case .plan(let variant, let limits):
                    return (.plan(try engine.plan(original, variant: variant, limits: limits, budget: budget)), [])
                case .probe(let limits):
                    return (.header(try engine.probe(original, limits: limits, budget: budget)), [])
                case .facts(let header, let sha256):
                    return (.facts(try engine.facts(original, header: header, sha256: sha256, budget: budget)), [])
                case .planAndRender(let variant, let limits, let focus, let encoding, let admitted):
                    let job = JobBudget(deadline: deadline, admittedBytes: admitted, tileThreads: request.tileThreads)
                    switch try engine.planAndRender(original, variant: variant, limits: limits, focus: focus,
                                                    encoding: encoding, budget: job) {
                    case .rendered(let output): return try rendered(output)
                    case .needsMore(let plan): return (.plan(plan), [])
                    }
                case .render(let plan, let sha256, let encoding):
                    return try rendered(try engine.render(original, plan: plan, factsSHA256: sha256,
                                                          encoding: encoding, budget: budget))
                case .encode:
                    preconditionFailure("handled above")
                }
            }
        } catch {
            return (.failed(error), [])
        }
    }

    /// A render's reply: its bitmap and rendition as sealed memfds.
    private static func rendered(_ output: RenderOutput) throws(RenderError) -> (WorkerReply, [OwnedFileDescriptor]) {
        let memories = try shared { () throws(SandboxError) in
            [try SharedMemory.sealed(name: "thumbd-bitmap", bytes: output.bitmap.pixels),
             try SharedMemory.sealed(name: "thumbd-encoded", bytes: output.encoded.bytes)]
        }
        return (.rendered(bitmapWidth: output.bitmap.width, bitmapHeight: output.bitmap.height, facts: output.facts,
                          format: output.encoded.format, width: output.encoded.width, height: output.encoded.height,
                          frames: output.encoded.frames, fromAnimation: output.fromAnimation,
                          autoQuality: output.autoQuality),
                memories)
    }

    /// A shared-memory step whose failure is the worker's, not the image's.
    private static func shared<T>(_ body: () throws(SandboxError) -> T) throws(RenderError) -> T {
        do {
            return try body()
        } catch {
            throw .internalError("the worker's shared memory failed: \(error)")
        }
    }

    /// Everything a library loads or opens the first time it runs, done
    /// before the sandbox forbids opening files: each encoder and decoder
    /// once on a tiny image (JPEG XL too: libjxl sets up its tables and
    /// thread state on first use), libheif's start-up, and the JSON coders.
    static func warmUp() {
        let engine = InProcessEngine()
        var bitmap = Bitmap(width: 2, height: 2)
        for i in stride(from: 0, to: bitmap.pixels.count, by: 4) { bitmap.pixels[i + 3] = 255 }
        let budget = JobBudget(deadline: Deadline(after: .seconds(30), on: clock), admittedBytes: 0)
        for format in [OutputFormat.jpeg, .png, .webp, .avif, .jxl] {
            guard let encoded = try? engine.encode(bitmap, encoding: EncodingSpec(format: format, quality: 80,
                                                                                 background: nil),
                                                   budget: budget) else { continue }
            let variant = PreparedVariant(width: 1, height: 1, fit: .cover)
            let limits = PipelineLimits(jpegXLSources: true)
            if let plan = try? ThumbnailPipeline.plan(source: encoded.bytes, variant: variant, limits: limits) {
                _ = try? ThumbnailPipeline.prepare(source: encoded.bytes, plan: plan)
            }
        }
        _ = try? ImageDecoder.probe(minimalGIF, maxPixels: 1)
        ImageDecoder.startLibraries()
        _ = try? WorkerWire.decode(WorkerReply.self, WorkerWire.encode(WorkerReply.ready))
    }

    /// A 1×1 GIF (header, screen descriptor, a 2-colour table, one image of one LZW code).
    private static let minimalGIF: [UInt8] = [
        0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00,
        0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF,
        0x2C, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,
        0x02, 0x02, 0x44, 0x01, 0x00, 0x3B,
    ]
}
