/* Preloaded (LD_PRELOAD) into the ThreadSanitizer test run only; see .ci/run.
 *
 * Why: Swift 6.3's Synchronization.Mutex on Linux takes and releases the lock
 * with an inlined atomic on its fast path (which TSan sees) but, when the lock
 * is contended, in the kernel (FUTEX_LOCK_PI / FUTEX_UNLOCK_PI) inside the
 * uninstrumented libswiftSynchronization.so (which TSan does not see). So every
 * hand-over of a contended Mutex is missing its happens-before edge and TSan
 * reports the protected state as raced ("Swift access race" in the withLock
 * closure). A 10-line program that increments a Mutex<Int> from 8 threads gets
 * 7 such reports; with this file preloaded, none, while an unprotected counter
 * beside it is still reported.
 *
 * What: the two slow paths are interposed (same symbols, found before the
 * library's) and tell TSan what they did: acquire on the lock word after the
 * kernel handed the lock over, release on it before handing it back. The fast
 * path's atomics use the same address, so the edges compose. Swift passes the
 * address-only handle as `self` in the swiftself register: swiftcall with a
 * swift_context parameter is that convention in C. The TSan entry points are
 * weak, so the tools that also inherit LD_PRELOAD (swift-build, the compiler)
 * load this harmlessly. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

void __tsan_acquire(void *addr) __attribute__((weak));
void __tsan_release(void *addr) __attribute__((weak));

typedef __attribute__((swiftcall)) void (*lock_slow_fn)(uint32_t tid, void *__attribute__((swift_context)) self);
typedef __attribute__((swiftcall)) void (*unlock_slow_fn)(void *__attribute__((swift_context)) self);

__attribute__((swiftcall)) void lock_slow(uint32_t tid, void *__attribute__((swift_context)) self) __asm__(LOCK_SLOW);
__attribute__((swiftcall)) void unlock_slow(void *__attribute__((swift_context)) self) __asm__(UNLOCK_SLOW);

static void *next(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "tsan-mutex: %s not found (Swift's Mutex changed? update .ci/tsan-mutex.c)\n", name);
        abort();
    }
    return f;
}

__attribute__((swiftcall)) void lock_slow(uint32_t tid, void *__attribute__((swift_context)) self) {
    static lock_slow_fn real;
    if (!real) real = (lock_slow_fn)next(LOCK_SLOW);
    real(tid, self);
    if (__tsan_acquire) __tsan_acquire(self);
}

__attribute__((swiftcall)) void unlock_slow(void *__attribute__((swift_context)) self) {
    static unlock_slow_fn real;
    if (!real) real = (unlock_slow_fn)next(UNLOCK_SLOW);
    if (__tsan_release) __tsan_release(self);
    real(self);
}
