import CThumbSandbox
import Glibc
import Synchronization

/// A worker process the daemon spawned, held through a pidfd so that killing
/// and reaping can never reach another process that reused its pid. A worker
/// that was never reaped is killed and reaped when this value goes away (a
/// blocking wait, short after SIGKILL), so none is left a zombie.
public final class WorkerProcess: Sendable {
    /// How a worker ended.
    public enum Ending: Equatable, Sendable {
        /// It called exit: the code.
        case exited(Int32)
        /// A signal ended it (SIGKILL from `kill()`, SIGSEGV from a crash): its number.
        case signaled(Int32)
    }

    public let pid: pid_t
    private let pidfd: OwnedFileDescriptor
    private let ending: Mutex<Ending?> = Mutex(nil)

    private init(pid: pid_t, pidfd: Int32) {
        self.pid = pid
        self.pidfd = OwnedFileDescriptor(taking: pidfd)
    }

    /// Starts `path` with `arguments` (argv[0] is `path`) and exactly
    /// `environment` (nothing of the daemon's own), stdin on /dev/null,
    /// stdout and stderr shared, `channel` on fd 3 and no other descriptor
    /// (`thumbd_spawn_worker`). Close the daemon's copy of `channel` afterwards.
    public static func spawn(path: String, arguments: [String], environment: [String: String] = [:],
                             channel: WorkerChannel) throws(SandboxError) -> WorkerProcess {
        guard let channelFD = channel.fileDescriptor else { throw .system("posix_spawn", EBADF) }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        let pid = thumbd_spawn_worker(path, argv, envp, channelFD)
        guard pid > 0 else { throw .system("posix_spawn", -pid) }
        let pidfd = thumbd_pidfd_open(pid)
        guard pidfd >= 0 else {
            // Not reaped yet, so the pid is still this child's.
            _ = Glibc.kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
            throw .system("pidfd_open", -pidfd)
        }
        return WorkerProcess(pid: pid, pidfd: pidfd)
    }

    /// A descriptor that polls readable once the worker has ended (for an
    /// event loop); owned here.
    public var pidFileDescriptor: Int32? { pidfd.rawValue }

    /// Sends SIGKILL. Nothing happens once the worker has been reaped.
    public func kill() {
        guard let fd = pidfd.rawValue else { return }
        _ = thumbd_pidfd_kill(fd)
    }

    /// How the worker ended, reaping it, or nil while it still runs. Never blocks.
    public func reap() throws(SandboxError) -> Ending? {
        let result: Result<Ending?, SandboxError> = ending.withLock { ending in
            if let ending { return .success(ending) }
            switch Self.wait(pidfd, nohang: true) {
            case .success(let found):
                ending = found
                return .success(found)
            case .failure(let error):
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Waits until the worker ends (after `kill()`, promptly) and reaps it.
    public func waitForExit() throws(SandboxError) -> Ending {
        if let known = ending.withLock({ $0 }) { return known }
        switch Self.wait(pidfd, nohang: false) {
        case .success(let found?):
            ending.withLock { $0 = found }
            return found
        case .success(nil):
            throw .system("waitid", EINTR)   // a blocking waitid does not answer "running"
        case .failure(.system(_, ECHILD)):
            // Reaped meanwhile by `reap()`, which stored the ending under the lock.
            if let known = ending.withLock({ $0 }) { return known }
            throw .system("waitid", ECHILD)
        case .failure(let error):
            throw error
        }
    }

    /// Caps the worker's data memory (RLIMIT_DATA soft limit, `thumbd_set_memory_cap`)
    /// for its next job. Not while another thread waits in `waitForExit()`:
    /// the limit is set by pid.
    public func setMemoryCap(bytes: UInt64) throws(SandboxError) {
        let result = ending.withLock { ending -> Int32 in
            ending == nil ? thumbd_set_memory_cap(pid, bytes) : -ESRCH
        }
        guard result == 0 else { throw .system("prlimit", -result) }
    }

    /// False in a sanitized build (AddressSanitizer, ThreadSanitizer), whose
    /// workers a data cap would kill for the sanitizer's own reservations:
    /// leave them uncapped.
    public static var memoryCapSupported: Bool { thumbd_memory_cap_supported() == 1 }

    private static func wait(_ pidfd: OwnedFileDescriptor, nohang: Bool) -> Result<Ending?, SandboxError> {
        guard let fd = pidfd.rawValue else { return .failure(.system("waitid", EBADF)) }
        var signaled: Int32 = 0
        var value: Int32 = 0
        let result = thumbd_pidfd_wait(fd, nohang ? 1 : 0, &signaled, &value)
        if result < 0 { return .failure(.system("waitid", -result)) }
        if result == 0 { return .success(nil) }
        return .success(signaled == 1 ? .signaled(value) : .exited(value))
    }

    deinit {
        if ending.withLock({ $0 }) == nil {
            kill()
            _ = try? waitForExit()
        }
    }

    // MARK: Inside the worker

    /// For a worker, first thing: SIGKILL when the daemon (`parent`, passed
    /// on its command line) dies; throws `.closed` if it already has.
    public static func dieWithParent(_ parent: pid_t) throws(SandboxError) {
        let result = thumbd_worker_die_with_parent(parent)
        if result == -ESRCH { throw .closed }
        guard result == 0 else { throw .system("prctl(PR_SET_PDEATHSIG)", -result) }
    }

    /// For a worker, once its libraries are loaded: the seccomp filter of
    /// `thumbd_enter_sandbox` on every thread, for the rest of its life.
    public static func enterSandbox() throws(SandboxError) {
        let result = thumbd_enter_sandbox()
        guard result == 0 else { throw .system("seccomp", -result) }
    }
}
