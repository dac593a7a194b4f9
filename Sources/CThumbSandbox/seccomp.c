#define _GNU_SOURCE
#include "thumbd_sandbox.h"
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define THUMBD_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define THUMBD_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

// Syscalls that fail with EPERM (thumbd_sandbox.h says why each group). Each
// guarded: aarch64 has no open, creat, link... (only the *at forms), and older
// kernel headers lack the newest numbers.
static const int refused[] = {
    // Opening files.
#ifdef __NR_open
    __NR_open,
#endif
    __NR_openat,
#ifdef __NR_openat2
    __NR_openat2,
#endif
#ifdef __NR_creat
    __NR_creat,
#endif
#ifdef __NR_uselib
    __NR_uselib,
#endif
    __NR_open_by_handle_at,
    // Changing the file system by path.
#ifdef __NR_link
    __NR_link,
#endif
    __NR_linkat,
#ifdef __NR_unlink
    __NR_unlink,
#endif
    __NR_unlinkat,
#ifdef __NR_rename
    __NR_rename,
#endif
#ifdef __NR_renameat
    __NR_renameat,
#endif
    __NR_renameat2,
#ifdef __NR_mkdir
    __NR_mkdir,
#endif
    __NR_mkdirat,
#ifdef __NR_rmdir
    __NR_rmdir,
#endif
#ifdef __NR_mknod
    __NR_mknod,
#endif
    __NR_mknodat,
#ifdef __NR_symlink
    __NR_symlink,
#endif
    __NR_symlinkat,
    __NR_truncate,
#ifdef __NR_chmod
    __NR_chmod,
#endif
    __NR_fchmodat,
#ifdef __NR_fchmodat2
    __NR_fchmodat2,
#endif
#ifdef __NR_chown
    __NR_chown,
#endif
#ifdef __NR_lchown
    __NR_lchown,
#endif
    __NR_fchownat,
#ifdef __NR_utime
    __NR_utime,
#endif
#ifdef __NR_utimes
    __NR_utimes,
#endif
#ifdef __NR_futimesat
    __NR_futimesat,
#endif
    __NR_utimensat,
    __NR_setxattr,
    __NR_lsetxattr,
    __NR_removexattr,
    __NR_lremovexattr,
    // Sockets.
    __NR_socket,
    __NR_socketpair,
    __NR_connect,
    __NR_bind,
    __NR_listen,
#ifdef __NR_accept
    __NR_accept,
#endif
    __NR_accept4,
    // Running programs, raising limits, reaching into other processes.
    __NR_execve,
    __NR_execveat,
    __NR_setrlimit,
    __NR_ptrace,
    __NR_process_vm_readv,
    __NR_process_vm_writev,
#ifdef __NR_pidfd_getfd
    __NR_pidfd_getfd,
#endif
    // io_uring performs opens and connects without passing through seccomp.
#ifdef __NR_io_uring_setup
    __NR_io_uring_setup,
    __NR_io_uring_enter,
    __NR_io_uring_register,
#endif
};

#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)(field))
#define RETURN(value) BPF_STMT(BPF_RET | BPF_K, (uint32_t)(value))
#define ALLOW RETURN(SECCOMP_RET_ALLOW)
#define REFUSE RETURN(SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))
#define JUMP_IF_EQUAL(value, then, otherwise) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(value), then, otherwise)

// Offsets of the two 32-bit halves of args[2] (both architectures are little-endian).
#define ARG2_LOW (offsetof(struct seccomp_data, args) + 2 * sizeof(uint64_t))
#define ARG2_HIGH (ARG2_LOW + sizeof(uint32_t))

int thumbd_enter_sandbox(void) {
#ifndef THUMBD_AUDIT_ARCH
    return -ENOSYS;
#else
    enum { REFUSED = sizeof refused / sizeof refused[0] };
    struct sock_filter program[8 + 2 * REFUSED + 8];
    unsigned short n = 0;

    // Another architecture's syscall numbers mean something else: kill.
    program[n++] = (struct sock_filter)LOAD(offsetof(struct seccomp_data, arch));
    program[n++] = (struct sock_filter)JUMP_IF_EQUAL(THUMBD_AUDIT_ARCH, 1, 0);
    program[n++] = (struct sock_filter)RETURN(SECCOMP_RET_KILL_PROCESS);
    program[n++] = (struct sock_filter)LOAD(offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
    // x32 calls carry the x86_64 arch with bit 30 set in the number.
    program[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, __X32_SYSCALL_BIT, 0, 1);
    program[n++] = (struct sock_filter)REFUSE;
#endif
    for (int i = 0; i < REFUSED; i++) {
        program[n++] = (struct sock_filter)JUMP_IF_EQUAL(refused[i], 0, 1);
        program[n++] = (struct sock_filter)REFUSE;
    }
    // prlimit64(pid, resource, new_limit, old_limit): reading is glibc's
    // getrlimit; any new limit is refused.
    program[n++] = (struct sock_filter)JUMP_IF_EQUAL(__NR_prlimit64, 0, 5);
    program[n++] = (struct sock_filter)LOAD(ARG2_LOW);
    program[n++] = (struct sock_filter)JUMP_IF_EQUAL(0, 0, 2);
    program[n++] = (struct sock_filter)LOAD(ARG2_HIGH);
    program[n++] = (struct sock_filter)JUMP_IF_EQUAL(0, 1, 0);
    program[n++] = (struct sock_filter)REFUSE;
    program[n++] = (struct sock_filter)ALLOW;

    struct sock_fprog filter = { .len = n, .filter = program };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -errno;
    long result = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &filter);
    if (result < 0) return -errno;
    // TSYNC answers with the id of a thread it could not synchronise
    // (one already under an unrelated filter).
    return result == 0 ? 0 : -EAGAIN;
#endif
}
