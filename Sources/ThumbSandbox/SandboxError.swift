/// Why a worker-layer call failed. The daemon maps these to a job's outcome
/// (a worker that closed its channel crashed, a wait that timed out is a hung
/// job); the layer itself knows no HTTP and no job.
public enum SandboxError: Error, Equatable, Sendable {
    /// No frame arrived in the time given.
    case timedOut
    /// The peer closed its end of the channel (a worker that exited or was
    /// killed; the daemon that went away).
    case closed
    /// A frame longer than the receiver accepts, or carrying more descriptors:
    /// the kernel discarded the rest and this side closed what arrived. The
    /// next frame arrives whole.
    case truncated
    /// Shared content larger than the reader's bound (bytes found, limit).
    case tooLarge(Int, limit: Int)
    /// A memfd expected sealed (a worker's result) that its sender could
    /// still change or resize.
    case notSealed
    /// A system call failed: its name and errno.
    case system(String, Int32)
}
