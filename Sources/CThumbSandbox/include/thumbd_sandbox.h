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
/// /dev/null, stdout and stderr are the daemon's, `channel_fd` is on fd 3 with
/// CLOEXEC cleared, every other descriptor from 4 up is closed (so no listening
/// socket, client connection or store file reaches a worker, CLOEXEC or not),
/// no signal is blocked and every signal has its default action (the daemon
/// blocks the ones it waits for; SIG_IGN would otherwise survive exec). The
/// child stays in the daemon's session and process group.
///
/// The spawn runs on one thread this library keeps for the life of the
/// process: the kernel's parent-death signal (see
/// `thumbd_worker_die_with_parent`) fires when the *thread* that created the
/// child exits, and a Dispatch or Swift concurrency thread may retire at any
/// idle moment, which would kill healthy workers. Returns the pid, or -errno.
pid_t thumbd_spawn_worker(const char *path, char *const argv[], char *const envp[], int channel_fd);

/// For the worker, first thing after start: prctl(PR_SET_PDEATHSIG, SIGKILL),
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
/// the kernel reap children by itself; the daemon must not do that).
int thumbd_pidfd_wait(int pidfd, int nohang, int *signaled, int *value);

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
int thumbd_set_memory_cap(pid_t pid, uint64_t bytes);

/// 0 in a process running under AddressSanitizer or ThreadSanitizer (their
/// shadow memory is terabytes of reservations a data cap cannot tell from
/// the job's own memory), else 1. Checked at compile time and, because the
/// Swift code may be sanitized when this C target is not, also at run time
/// by looking the sanitizer runtime's entry points up.
int thumbd_memory_cap_supported(void);

// MARK: Seccomp

/// PR_SET_NO_NEW_PRIVS, then a seccomp filter on every thread of the process
/// (SECCOMP_FILTER_FLAG_TSYNC). A syscall of another architecture (i386
/// int 0x80) kills the process. These fail with EPERM, not a kill, so a
/// library's lazy open gets a clean error: opening files (open, openat,
/// openat2, creat, uselib), changing the file system (link, unlink, rename,
/// mkdir, rmdir, mknod, symlink, truncate by path, chmod, chown by path,
/// utimes), sockets (socket, socketpair, connect, bind, listen, accept,
/// accept4), execve, execveat, setrlimit, prlimit64 with a new limit (reading
/// limits stays allowed: glibc's getrlimit is prlimit64 with NULL), ptrace,
/// process_vm_readv and process_vm_writev (the daemon's memory holds its
/// secrets), pidfd_getfd (another process's descriptors), io_uring (whose
/// operations open and connect without passing through seccomp), and on
/// x86_64 every x32 syscall. Everything else is allowed (kill and tgkill
/// included: abort needs them). Load every plug-in and data file before
/// calling (libheif's plug-ins, iconv, time zones). Returns 0 or -errno
/// (-EAGAIN if another thread could not be synchronised).
int thumbd_enter_sandbox(void);

// MARK: Test hooks
// For the tests of the sandbox only: a worker calls these when a
// test-configured job asks, so tests can watch the daemon survive a crash,
// kill a hang and cap an allocation. Never reached by a real request.

/// Writes through a NULL pointer (volatile, so the compiler keeps it): SIGSEGV.
void thumbd_test_crash(void);

/// Sleeps forever; only the daemon's SIGKILL ends it.
void thumbd_test_hang(void);

/// mallocs `bytes` and writes to every page of it (so the memory is really
/// committed), then frees it. 0, or -ENOMEM when malloc returned NULL.
int thumbd_test_allocate(uint64_t bytes);

#endif
