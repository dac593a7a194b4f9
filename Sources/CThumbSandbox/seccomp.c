#define _GNU_SOURCE
#include "thumbd_sandbox.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define THUMBD_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define THUMBD_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

// The worker's filter (Isolation.md § The seccomp filter lists every call and why): an allow-list.
// Each entry is guarded, because aarch64 lacks the old non-*at calls and older headers the newest.

/// Allowed whatever their arguments: memory, the channel and its memfds, threads, time, signals'
/// own bookkeeping. Calls with arguments worth checking are below, in `thumbd_enter_sandbox`.
static const int allowed[] = {
    // The channel and the descriptors that travel on it (an original, a memfd result).
    __NR_read, __NR_write, __NR_readv, __NR_writev, __NR_pread64, __NR_pwrite64, __NR_lseek, __NR_close,
    __NR_fcntl, __NR_ftruncate, __NR_memfd_create, __NR_recvmsg, __NR_sendmsg, __NR_ppoll,
#ifdef __NR_poll
    __NR_poll,
#endif
#ifdef __NR_fstat
    __NR_fstat,
#endif
    // Memory: malloc, the decoders' buffers, thread stacks.
    __NR_brk, __NR_mmap, __NR_munmap, __NR_mremap, __NR_mprotect, __NR_madvise,
    // Threads (libheif's, dav1d's and aom's pools; `clone` itself is checked below).
    __NR_futex, __NR_set_robust_list, __NR_get_robust_list, __NR_set_tid_address, __NR_exit, __NR_exit_group,
    __NR_gettid, __NR_sched_yield, __NR_sched_getaffinity, __NR_sched_getparam, __NR_sched_getscheduler,
#ifdef __NR_rseq
    __NR_rseq,
#endif
#ifdef __NR_futex_waitv
    __NR_futex_waitv,
#endif
    // Who and where it is: read-only answers about itself (sysconf's memory and CPU counts).
    __NR_getpid, __NR_getppid, __NR_getuid, __NR_geteuid, __NR_getgid, __NR_getegid, __NR_getresuid,
    __NR_getresgid, __NR_sysinfo, __NR_uname, __NR_getrusage, __NR_times,
    // Signals' own bookkeeping (sending one is checked below).
    __NR_rt_sigprocmask, __NR_rt_sigreturn, __NR_sigaltstack, __NR_restart_syscall,
    // Time and randomness (Swift's hashing seeds itself from getrandom).
    __NR_clock_gettime, __NR_clock_getres, __NR_clock_nanosleep, __NR_nanosleep, __NR_gettimeofday,
    __NR_getrandom,
#ifdef __NR_time
    __NR_time,
#endif
};

/// Calls no decoder makes and an attack does: the worker is killed with SIGSYS, after one log line
/// naming the call (`on_forbidden_call`).
static const int attack_only[] = {
    __NR_execve, __NR_execveat, __NR_ptrace, __NR_process_vm_readv, __NR_process_vm_writev,
#ifdef __NR_fork
    __NR_fork,
#endif
#ifdef __NR_vfork
    __NR_vfork,
#endif
    __NR_unshare, __NR_setns, __NR_mount, __NR_umount2, __NR_pivot_root, __NR_chroot,
    __NR_bpf, __NR_perf_event_open, __NR_userfaultfd, __NR_fanotify_init, __NR_fanotify_mark,
    __NR_keyctl, __NR_add_key, __NR_request_key, __NR_init_module, __NR_finit_module, __NR_delete_module,
    __NR_kexec_load,
#ifdef __NR_kexec_file_load
    __NR_kexec_file_load,
#endif
#ifdef __NR_pidfd_getfd
    __NR_pidfd_getfd,
#endif
    __NR_open_by_handle_at, __NR_name_to_handle_at,
#ifdef __NR_io_uring_setup
    __NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register,
#endif
#ifdef __NR_fsopen
    __NR_fsopen, __NR_fsconfig, __NR_fsmount, __NR_fspick, __NR_move_mount, __NR_open_tree,
#endif
#ifdef __NR_mount_setattr
    __NR_mount_setattr,
#endif
    // Identity: a worker made its one change before the filter; another is an attack.
    __NR_setuid, __NR_setgid, __NR_setreuid, __NR_setregid, __NR_setresuid, __NR_setresgid, __NR_setgroups,
    __NR_setfsuid, __NR_setfsgid, __NR_capset, __NR_personality,
};

#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)(field))
#define RETURN(value) BPF_STMT(BPF_RET | BPF_K, (uint32_t)(value))
#define JUMP_IF_EQUAL(value, then, otherwise) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(value), then, otherwise)
#define JUMP_IF_ANY(bits, then, otherwise) BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, (uint32_t)(bits), then, otherwise)
#define AND(bits) BPF_STMT(BPF_ALU | BPF_AND | BPF_K, (uint32_t)(bits))

#define ALLOW SECCOMP_RET_ALLOW
#define NOT_HERE (SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA))
#define KILL SECCOMP_RET_TRAP

/// The two 32-bit halves of argument `n` (both architectures are little-endian).
#define ARG_LOW(n) (offsetof(struct seccomp_data, args) + (n) * sizeof(uint64_t))
#define ARG_HIGH(n) (ARG_LOW(n) + sizeof(uint32_t))

/// The flags glibc's pthread_create passes to clone; a new process or namespace needs others.
#define THREAD_REQUIRED (CLONE_VM | CLONE_SIGHAND | CLONE_THREAD)
#define THREAD_ALLOWED (THREAD_REQUIRED | CLONE_FS | CLONE_FILES | CLONE_SYSVSEM | CLONE_SETTLS | \
                        CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)

enum { ALLOWED = sizeof allowed / sizeof allowed[0], ATTACK_ONLY = sizeof attack_only / sizeof attack_only[0] };

typedef struct {
    struct sock_filter code[16 + 2 * ALLOWED + 2 * ATTACK_ONLY + 64];
    unsigned short length;
} program;

static void emit(program *p, struct sock_filter instruction) {
    // Sized above for every instruction below; a change that outgrows it fails loudly in tests.
    if (p->length < sizeof p->code / sizeof p->code[0]) p->code[p->length] = instruction;
    p->length++;
}

/// `if nr == call { return action }`.
static void on_call(program *p, int call, uint32_t action) {
    emit(p, (struct sock_filter)JUMP_IF_EQUAL(call, 0, 1));
    emit(p, (struct sock_filter)RETURN(action));
}

/// `if nr == call && args[arg] == value { return ALLOW }`, else `otherwise`; the accumulator holds
/// nr before and after (it is reloaded).
static void on_call_with_argument(program *p, int call, int arg, uint32_t value, uint32_t otherwise) {
    emit(p, (struct sock_filter)JUMP_IF_EQUAL(call, 0, 6));
    emit(p, (struct sock_filter)LOAD(ARG_HIGH(arg)));
    emit(p, (struct sock_filter)JUMP_IF_EQUAL(0, 0, 2));
    emit(p, (struct sock_filter)LOAD(ARG_LOW(arg)));
    emit(p, (struct sock_filter)JUMP_IF_EQUAL(value, 1, 0));
    emit(p, (struct sock_filter)RETURN(otherwise));
    emit(p, (struct sock_filter)RETURN(ALLOW));
}

// MARK: The log line of a forbidden call

/// Writes "thumbd worker: the seccomp filter stopped system call N" to stderr (the daemon's pipe),
/// then makes a forbidden call again: SIGSYS is blocked while this handler runs, so the kernel
/// resets the action to its default and the worker dies of SIGSYS, which the daemon reads as a
/// filter kill. Async-signal-safe: no stdio, no allocation.
static void on_forbidden_call(int signal_number, siginfo_t *info, void *context) {
    (void)signal_number;
    (void)context;
    static const char prefix[] = "thumbd worker: the seccomp filter stopped system call ";
    char line[sizeof prefix + 16];
    memcpy(line, prefix, sizeof prefix - 1);
    size_t length = sizeof prefix - 1;
    char digits[12];
    int count = 0;
    unsigned int number = (unsigned int)info->si_syscall;
    do {
        digits[count++] = (char)('0' + number % 10);
        number /= 10;
    } while (number != 0 && count < (int)sizeof digits);
    while (count > 0) line[length++] = digits[--count];
    line[length++] = '\n';
    ssize_t ignored = write(STDERR_FILENO, line, length);
    (void)ignored;
    syscall(__NR_ptrace, 0, 0, 0, 0);
    _exit(71);   // not reached: the call above ends the process
}

int thumbd_enter_sandbox(void) {
#ifndef THUMBD_AUDIT_ARCH
    return -ENOSYS;
#else
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_forbidden_call;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGSYS, &action, NULL) != 0) return -errno;

    const uint32_t self = (uint32_t)getpid();
    program p = { .length = 0 };
    // Another architecture's syscall numbers mean something else: kill outright.
    emit(&p, (struct sock_filter)LOAD(offsetof(struct seccomp_data, arch)));
    emit(&p, (struct sock_filter)JUMP_IF_EQUAL(THUMBD_AUDIT_ARCH, 1, 0));
    emit(&p, (struct sock_filter)RETURN(SECCOMP_RET_KILL_PROCESS));
    emit(&p, (struct sock_filter)LOAD(offsetof(struct seccomp_data, nr)));
#if defined(__x86_64__)
    // x32 calls carry the x86_64 arch with bit 30 set in the number: no library of ours makes one.
    emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, __X32_SYSCALL_BIT, 0, 1));
    emit(&p, (struct sock_filter)RETURN(KILL));
#endif
    for (int i = 0; i < ALLOWED; i++) on_call(&p, allowed[i], ALLOW);
    for (int i = 0; i < ATTACK_ONLY; i++) on_call(&p, attack_only[i], KILL);

    // Signals go to the worker itself only: kill(self), tgkill(self, any of its threads) — raise,
    // abort and pthread_kill. Any other target is an attack on the daemon or a neighbour.
    on_call_with_argument(&p, __NR_kill, 0, self, KILL);
    on_call_with_argument(&p, __NR_tgkill, 0, self, KILL);
    // prlimit64(pid, resource, new, old) with new == NULL is glibc's getrlimit; a new limit is not allowed.
    on_call_with_argument(&p, __NR_prlimit64, 2, 0, NOT_HERE);
    // The thread name (pthread_setname_np) and nothing else of prctl: no dumpable flag, no death signal.
    on_call_with_argument(&p, __NR_prctl, 0, PR_SET_NAME, NOT_HERE);

    // fstat (glibc: newfstatat(fd, "", buf, AT_EMPTY_PATH)). Without AT_EMPTY_PATH it would look a
    // path up: not allowed.
    emit(&p, (struct sock_filter)JUMP_IF_EQUAL(__NR_newfstatat, 0, 4));
    emit(&p, (struct sock_filter)LOAD(ARG_LOW(3)));
    emit(&p, (struct sock_filter)JUMP_IF_ANY(AT_EMPTY_PATH, 0, 1));
    emit(&p, (struct sock_filter)RETURN(ALLOW));
    emit(&p, (struct sock_filter)RETURN(NOT_HERE));

    // rt_sigaction for anything but SIGSYS: the forbidden-call handler above stays in place.
    emit(&p, (struct sock_filter)LOAD(offsetof(struct seccomp_data, nr)));
    emit(&p, (struct sock_filter)JUMP_IF_EQUAL(__NR_rt_sigaction, 0, 4));
    emit(&p, (struct sock_filter)LOAD(ARG_LOW(0)));
    emit(&p, (struct sock_filter)JUMP_IF_EQUAL(SIGSYS, 0, 1));
    emit(&p, (struct sock_filter)RETURN(KILL));
    emit(&p, (struct sock_filter)RETURN(ALLOW));

    // clone: threads only (the flags glibc's pthread_create passes); a new process or namespace
    // is not allowed. clone3 passes its flags in memory the filter cannot read: ENOSYS, so that
    // glibc falls back to clone.
    emit(&p, (struct sock_filter)LOAD(offsetof(struct seccomp_data, nr)));
    emit(&p, (struct sock_filter)JUMP_IF_EQUAL(__NR_clone, 0, 8));
    emit(&p, (struct sock_filter)LOAD(ARG_HIGH(0)));
    emit(&p, (struct sock_filter)JUMP_IF_EQUAL(0, 0, 5));
    emit(&p, (struct sock_filter)LOAD(ARG_LOW(0)));
    emit(&p, (struct sock_filter)JUMP_IF_ANY(~(uint32_t)THREAD_ALLOWED, 3, 0));
    emit(&p, (struct sock_filter)AND(THREAD_REQUIRED));
    emit(&p, (struct sock_filter)JUMP_IF_EQUAL(THREAD_REQUIRED, 0, 1));
    emit(&p, (struct sock_filter)RETURN(ALLOW));
    emit(&p, (struct sock_filter)RETURN(NOT_HERE));

    // Everything else: opening files, sockets, clone3, ioctl, new limits... ENOSYS, as for a call
    // this kernel does not have, so a library's lazy attempt gets a clean error.
    emit(&p, (struct sock_filter)RETURN(NOT_HERE));
    if (p.length > sizeof p.code / sizeof p.code[0]) return -E2BIG;

    struct sock_fprog filter = { .len = p.length, .filter = p.code };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -errno;
    long result = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &filter);
    if (result < 0) return -errno;
    // TSYNC answers with the id of a thread it could not synchronise
    // (one already under an unrelated filter).
    return result == 0 ? 0 : -EAGAIN;
#endif
}
