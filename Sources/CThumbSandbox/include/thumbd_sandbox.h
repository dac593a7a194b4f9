#ifndef THUMBD_SANDBOX_H
#define THUMBD_SANDBOX_H
// The system layer of the decode workers (SPEC §16): the channel between the
// daemon and a worker, spawning and reaping workers, shared memory for the
// originals and results, the memory cap and the seccomp filter. Every function
// returns 0 (or a count, a pid, an fd) on success and -errno on failure, so
// Swift never reads the thread-local errno after a call.
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/// Most descriptors one channel frame carries: a job needs an original and a
/// result at most, and a fixed ceiling sizes the control buffer, so a frame
/// carrying more is recognised (and its descriptors closed) rather than half
/// delivered.
#define THUMBD_CHANNEL_MAX_FDS 4

/// The descriptor a worker finds its channel on. 0-2 stay the standard streams.
#define THUMBD_WORKER_CHANNEL_FD 3

// MARK: Channel

/// socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC). Sequenced packets keep
/// frame boundaries (one send is one receive, no length prefix to trust), and a
/// dead peer shows as end of stream. CLOEXEC: neither end may leak into any
/// other child; `thumbd_spawn_worker` hands the worker its end explicitly.
int thumbd_channel_pair(int fds[2]);

/// Sends one frame of `len` bytes (1 or more: a zero-length seqpacket frame
/// would read as end of stream) with `nfds` descriptors (0 to
/// THUMBD_CHANNEL_MAX_FDS) attached by SCM_RIGHTS, in one sendmsg: the frame
/// and its descriptors arrive together or not at all. The caller keeps its own
/// descriptors (the kernel passes duplicates). MSG_NOSIGNAL: a worker that died
/// gives -EPIPE, not a SIGPIPE to the daemon. Retries EINTR. A frame larger
/// than the socket's send buffer (about 200 KiB by default) gives -EMSGSIZE:
/// bulk data goes through a memfd, not the frame.
int thumbd_channel_send(int fd, const void *buf, size_t len, const int *fds, int nfds);

/// Waits up to `timeout_ms` (negative: forever; interrupted waits resume with
/// the time left) for one frame, then receives it into `buf` and its
/// descriptors (MSG_CMSG_CLOEXEC, so none leaks into a child spawned
/// meanwhile) into `fds`, setting `*nfds`. Returns the frame's length, 0 when
/// the peer closed its end, -ETIMEDOUT, or -EMSGSIZE when the frame was longer
/// than `cap`, carried more than `maxfds` descriptors or its control data was
/// cut (the rest of that frame is discarded by the kernel; the next frame
/// arrives whole). On every result but a positive length, every descriptor
/// that arrived has been closed and `*nfds` is 0: nothing leaks.
ssize_t thumbd_channel_recv(int fd, void *buf, size_t cap, int *fds, int maxfds, int *nfds, int timeout_ms);

// MARK: Workers

/// posix_spawn of `path` (never fork: the daemon's address space is large and
/// multithreaded) with `argv` and `envp` (NULL: an empty environment, never
/// the daemon's own, which may hold credentials). In the child: stdin is
/// /dev/null, stdout and stderr are `output_fd` (the write end of the pipe the
/// daemon drains into its log, never the daemon's own descriptors, which a
/// worker could truncate or flood), `channel_fd` is on fd 3 with CLOEXEC
/// cleared, every other descriptor from 4 up is closed (so no listening
/// socket, client connection or store file reaches a worker, CLOEXEC or not),
/// no signal is blocked and every signal has its default action (the daemon
/// blocks the ones it waits for; SIG_IGN would otherwise survive exec). The
/// child leads a process group of its own (its pgid is its pid), so a kill of
/// the group reaches anything it could have started.
///
/// The spawn runs on one thread this library keeps for the life of the
/// process: the kernel's parent-death signal (see
/// `thumbd_worker_die_with_parent`) fires when the *thread* that created the
/// child exits, and a Dispatch or Swift concurrency thread may retire at any
/// idle moment, which would kill healthy workers. Returns the pid, or -errno.
pid_t thumbd_spawn_worker(const char *path, char *const argv[], char *const envp[], int channel_fd, int output_fd);

/// pipe2(O_CLOEXEC) for a worker's stdout and stderr: `fds[0]` (the daemon's
/// read end) is also non-blocking, for an event source that drains it.
int thumbd_output_pipe(int fds[2]);

/// SIGKILL to every process of the group `group` leads (a worker's pid). Call
/// it only while the leader is not yet reaped: until then the group's id
/// cannot be reused by another process. -EINVAL for 0 and 1.
int thumbd_kill_group(pid_t group);

/// For a worker of a root daemon, first thing, while single-threaded
/// (SPEC §16): empties the capability bounding set, drops the supplementary
/// groups, takes `gid` then `uid` (real, effective and saved), empties the
/// permitted, effective, inheritable and ambient capability sets, and checks
/// the result (and that setuid(0) now fails). Changing the uid clears
/// PR_SET_PDEATHSIG, so `thumbd_worker_die_with_parent` comes after this.
/// -EINVAL for uid or gid 0; -EPERM when a check fails.
int thumbd_worker_drop_privileges(uid_t uid, gid_t gid);

/// For the worker, before its first job: a C++ new-handler (libstdc++'s
/// `std::set_new_handler`, looked up at run time) that writes "thumbd worker:
/// out of memory (operator new)" to stderr and exits 73 when a codec's
/// `operator new` fails past the memory cap, so the daemon answers the job
/// `422 image_too_large` instead of taking it for a crash or, worse, for a
/// corrupt image a library caught `std::bad_alloc` for. -ENOENT when no C++
/// runtime is loaded.
int thumbd_worker_report_allocation_failures(void);

/// For the worker, after the privilege drop: prctl(PR_SET_PDEATHSIG, SIGKILL),
/// then getppid() == `expected_parent` (the daemon passes its pid on the
/// command line). The check closes the race where the daemon died before the
/// prctl, when the worker was already re-parented and no signal will come.
/// posix_spawn has no way to set this in the child, hence the worker's call.
/// Returns 0, -ESRCH when the parent is already gone (exit at once), or -errno.
int thumbd_worker_die_with_parent(pid_t expected_parent);

/// pidfd_open(pid): a descriptor for a child that stays bound to that process
/// even after its pid is reused, so killing and reaping through it can never
/// reach another process. Readable (poll) once the child has ended.
int thumbd_pidfd_open(pid_t pid);

/// pidfd_send_signal(pidfd, SIGKILL). -ESRCH once the child has been reaped.
int thumbd_pidfd_kill(int pidfd);

/// waitid(P_PIDFD) for the child's end, blocking or not (`nohang`). Returns 1
/// with `*signaled` (0: exited, 1: killed by a signal) and `*value` (the exit
/// code or the signal number), 0 when it is still running (`nohang`), or
/// -errno (-ECHILD: already reaped, or SIGCHLD is set to SIG_IGN, which makes
/// the kernel reap children by itself; the daemon must not do that). `keep`:
/// report the end but leave the child a zombie (WNOWAIT), so its pid and
/// process group stay its own for one more call.
int thumbd_pidfd_wait(int pidfd, int nohang, int keep, int *signaled, int *value);

// MARK: Shared memory

/// memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING): anonymous memory that
/// travels as a descriptor, so an original or a result crosses the channel
/// without a copy through the frame. The name only shows in /proc/.../fd.
int thumbd_memfd(const char *name);

/// Adds F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL: after this no
/// holder (the worker included) can change the content or size, so a reader
/// that checked `thumbd_is_sealed` may trust one fstat and a mapping cannot
/// SIGBUS. -EBUSY while a writable shared mapping of it exists.
int thumbd_seal(int fd);

/// 1 when shrink, grow and write are all sealed, 0 when not, -EINVAL for a
/// descriptor that cannot be sealed (a regular file on disk, a pipe).
int thumbd_is_sealed(int fd);

// MARK: Memory cap

/// prlimit(pid, RLIMIT_DATA): soft limit `bytes`, hard limit read first and
/// kept (a worker may not raise its soft limit anyway: the seccomp filter
/// refuses every limit change). RLIMIT_DATA (brk and private writable
/// mappings, Linux 4.7+) rather than RLIMIT_AS: the allocator's per-thread
/// arenas reserve address space they never touch. Not counted: shared
/// mappings and memfd pages. The daemon sets it on a worker before each job.
/// `uid`/`gid` (-1: none): the worker's ids when it runs as another user;
/// a root daemon without CAP_SYS_RESOURCE then makes the call with its real
/// ids switched to the worker's on the calling thread alone, which the
/// kernel's same-user rule allows, and switched back.
int thumbd_set_memory_cap(pid_t pid, uint64_t bytes, int64_t uid, int64_t gid);

/// 0 in a process running under AddressSanitizer or ThreadSanitizer (their
/// shadow memory is terabytes of reservations a data cap cannot tell from
/// the job's own memory), else 1. Checked at compile time and, because the
/// Swift code may be sanitized when this C target is not, also at run time
/// by looking the sanitizer runtime's entry points up.
int thumbd_memory_cap_supported(void);

// MARK: Seccomp

/// PR_SET_NO_NEW_PRIVS, then a seccomp filter on every thread of the process
/// (SECCOMP_FILTER_FLAG_TSYNC): an allow-list of what a job needs
/// (Isolation.md § The seccomp filter names each call and why). A call not on
/// it fails with ENOSYS (clone3 included, so glibc falls back to clone, which
/// passes with the thread flags only), so a library's lazy open gets a clean
/// error. A short list of calls only an attack makes (execve, ptrace, fork,
/// namespaces, mount, bpf, fanotify, keyctl, identity changes...) and a signal
/// to any other process trap: a SIGSYS handler installed here writes one line
/// naming the call to stderr, and the worker then dies of SIGSYS; replacing
/// that handler is itself such a call. A syscall of another architecture
/// (i386 int 0x80) kills the process at once. Load every plug-in and data file
/// before calling (libheif's plug-ins, iconv, time zones). Returns 0 or -errno
/// (-EAGAIN if another thread could not be synchronised).
int thumbd_enter_sandbox(void);

#endif
