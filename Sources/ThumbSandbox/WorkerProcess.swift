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
    /// Whom it runs as, when it changes identity (a root daemon's worker).
    public let identity: WorkerIdentity?
    private let pidfd: OwnedFileDescriptor
    private let ending: Mutex<Ending?> = Mutex(nil)

    private init(pid: pid_t, pidfd: Int32, identity: WorkerIdentity?) {
        self.pid = pid
        self.pidfd = OwnedFileDescriptor(taking: pidfd)
        self.identity = identity
    }

    /// Starts `path` with `arguments` (argv[0] is `path`) and exactly
    /// `environment` (nothing of the daemon's own), stdin on /dev/null,
    /// stdout and stderr on `output` (the write end of a pipe the caller
    /// drains), `channel` on fd 3 and no other descriptor, in a process group
    /// of its own (`thumbd_spawn_worker`). Close the daemon's copies of
    /// `channel` and `output` afterwards.
    public static func spawn(path: String, arguments: [String], environment: [String: String] = [:],
                             channel: WorkerChannel, output: Int32,
                             identity: WorkerIdentity? = nil) throws(SandboxError) -> WorkerProcess {
        guard let channelFD = channel.fileDescriptor else { throw .system("posix_spawn", EBADF) }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        let pid = thumbd_spawn_worker(path, argv, envp, channelFD, output)
        guard pid > 0 else { throw .system("posix_spawn", -pid) }
        let pidfd = thumbd_pidfd_open(pid)
        guard pidfd >= 0 else {
            // Not reaped yet, so the pid is still this child's.
            _ = Glibc.kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
            throw .system("pidfd_open", -pidfd)
        }
        return WorkerProcess(pid: pid, pidfd: pidfd, identity: identity)
    }

    /// A descriptor that polls readable once the worker has ended (for an
    /// event loop); owned here.
    public var pidFileDescriptor: Int32? { pidfd.rawValue }

    /// Sends SIGKILL to the worker's process group, then to the worker
    /// itself. Nothing happens once the worker has been reaped (the lock keeps
    /// `reap()` out meanwhile: an unreaped leader's group id cannot belong to
    /// anyone else).
    public func kill() {
        ending.withLock { ending in
            guard ending == nil, let fd = pidfd.rawValue else { return }
            _ = thumbd_kill_group(pid)
            _ = thumbd_pidfd_kill(fd)
        }
    }

    /// How the worker ended, reaping it, or nil while it still runs. Never blocks.
    public func reap() throws(SandboxError) -> Ending? {
        let result: Result<Ending?, SandboxError> = ending.withLock { ending in
            if let ending { return .success(ending) }
            // As in `waitForExit`: the group is killed before the leader is reaped.
            if case .success(.some) = Self.wait(pidfd, nohang: true, keep: true) { _ = thumbd_kill_group(pid) }
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
        // Waits for the end without reaping; then whatever the worker left in its group ends with
        // it, killed while the leader (a zombie now) still holds the group's id; then the reap.
        if case .success = Self.wait(pidfd, nohang: false, keep: true) {
            ending.withLock { ending in
                if ending == nil { _ = thumbd_kill_group(pid) }
            }
        }
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
            ending == nil ? thumbd_set_memory_cap(pid, bytes, identity.map { Int64($0.uid) } ?? -1,
                                                 identity.map { Int64($0.gid) } ?? -1) : -ESRCH
        }
        guard result == 0 else { throw .system("prlimit", -result) }
    }

    /// False in a sanitized build (AddressSanitizer, ThreadSanitizer), whose
    /// workers a data cap would kill for the sanitizer's own reservations:
    /// leave them uncapped.
    public static var memoryCapSupported: Bool { thumbd_memory_cap_supported() == 1 }

    private static func wait(_ pidfd: OwnedFileDescriptor, nohang: Bool,
                             keep: Bool = false) -> Result<Ending?, SandboxError> {
        guard let fd = pidfd.rawValue else { return .failure(.system("waitid", EBADF)) }
        var signaled: Int32 = 0
        var value: Int32 = 0
        let result = thumbd_pidfd_wait(fd, nohang ? 1 : 0, keep ? 1 : 0, &signaled, &value)
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

    /// For a worker of a root daemon, first thing: no groups, `identity`'s gid
    /// and uid, no capability (`thumbd_worker_drop_privileges`).
    public static func dropPrivileges(to identity: WorkerIdentity) throws(SandboxError) {
        let result = thumbd_worker_drop_privileges(identity.uid, identity.gid)
        guard result == 0 else { throw .system("dropping privileges to \(identity)", -result) }
    }

    /// For a worker, after the privilege drop: SIGKILL when the daemon (`parent`, passed
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
