#define _GNU_SOURCE
#include "thumbd_sandbox.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>

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

int thumbd_set_memory_cap(pid_t pid, uint64_t bytes) {
    struct rlimit current;
    if (prlimit(pid, RLIMIT_DATA, NULL, &current) != 0) return -errno;
    if (current.rlim_max != RLIM_INFINITY && bytes > current.rlim_max) return -EINVAL;
    struct rlimit wanted = { .rlim_cur = (rlim_t)bytes, .rlim_max = current.rlim_max };
    return prlimit(pid, RLIMIT_DATA, &wanted, NULL) == 0 ? 0 : -errno;
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
