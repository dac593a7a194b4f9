#define _GNU_SOURCE
#include "thumbd_sandbox.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __has_feature
#define __has_feature(x) 0
#endif

int thumbd_memfd(const char *name) {
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    return fd >= 0 ? fd : -errno;
}

enum { CONTENT_SEALS = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE };

int thumbd_seal(int fd) {
    return fcntl(fd, F_ADD_SEALS, CONTENT_SEALS | F_SEAL_SEAL) == 0 ? 0 : -errno;
}

int thumbd_is_sealed(int fd) {
    int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0) return -errno;
    return (seals & CONTENT_SEALS) == CONTENT_SEALS ? 1 : 0;
}

static int set_cap(pid_t pid, uint64_t bytes) {
    struct rlimit current;
    if (prlimit(pid, RLIMIT_DATA, NULL, &current) != 0) return -errno;
    if (current.rlim_max != RLIM_INFINITY && bytes > current.rlim_max) return -EINVAL;
    struct rlimit wanted = { .rlim_cur = (rlim_t)bytes, .rlim_max = current.rlim_max };
    return prlimit(pid, RLIMIT_DATA, &wanted, NULL) == 0 ? 0 : -errno;
}

int thumbd_set_memory_cap(pid_t pid, uint64_t bytes, int64_t uid, int64_t gid) {
    int result = set_cap(pid, bytes);
    if (result != -EPERM || uid < 0 || gid < 0) return result;
    // A root daemon without CAP_SYS_RESOURCE (a container's root) may still set a limit on a
    // process whose ids all equal its real ids. So this thread alone (raw syscalls: glibc's
    // wrappers would change every thread) takes the worker's real uid and gid for the one call,
    // keeping its effective ids, hence its capabilities, and then takes its own back.
    uid_t ruid, euid, suid;
    gid_t rgid, egid, sgid;
    if (getresuid(&ruid, &euid, &suid) != 0 || getresgid(&rgid, &egid, &sgid) != 0) return -errno;
    if (syscall(SYS_setresgid, (gid_t)gid, (gid_t)-1, (gid_t)-1) != 0) return -errno;
    if (syscall(SYS_setresuid, (uid_t)uid, (uid_t)-1, (uid_t)-1) != 0) {
        int err = errno;
        if (syscall(SYS_setresgid, rgid, (gid_t)-1, (gid_t)-1) != 0) abort();
        return -err;
    }
    result = set_cap(pid, bytes);
    // A thread that cannot take its own ids back must not run anything else.
    if (syscall(SYS_setresuid, ruid, (uid_t)-1, (uid_t)-1) != 0) abort();
    if (syscall(SYS_setresgid, rgid, (gid_t)-1, (gid_t)-1) != 0) abort();
    return result;
}

int thumbd_memory_cap_supported(void) {
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return 0;
#else
    // `swift build --sanitize=address` instruments the Swift code and links the
    // runtime; whether this C file was instrumented too does not matter, the
    // process's memory is the runtime's either way.
    if (dlsym(RTLD_DEFAULT, "__asan_init") != NULL || dlsym(RTLD_DEFAULT, "__tsan_init") != NULL) return 0;
    return 1;
#endif
}
