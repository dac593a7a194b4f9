// Manual check of thumbd_enter_sandbox and thumbd_worker_die_with_parent
// (README.md here): prints what each call returns inside the sandbox. Not a
// CI step: the filter cannot be tried in the test runner without sandboxing it.
#define _GNU_SOURCE
#include "thumbd_sandbox.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;

// `result` is the call's return value (-1 and errno on failure, as libc returns).
static void report(const char *what, long result, int error, const char *expected) {
    char got[64];
    if (result < 0) snprintf(got, sizeof got, "-1 %s", strerrorname_np(error));
    else snprintf(got, sizeof got, "%ld", result);
    int ok = strcmp(expected, "ok") == 0 ? result >= 0 : strcmp(got, expected) == 0;
    if (!ok) failures++;
    printf("%-48s %-14s %s\n", what, got, ok ? "as expected" : "UNEXPECTED");
}
#define CHECK(what, call, expected) do { errno = 0; long r_ = (long)(call); report(what, r_, errno, expected); } while (0)
// For thumbd_* calls, which return -errno themselves.
#define CHECK_THUMBD(what, call, expected) do { long r_ = (long)(call); report(what, r_ < 0 ? -1 : r_, r_ < 0 ? (int)-r_ : 0, expected); } while (0)

static void *sleeper(void *unused) { (void)unused; pause(); return NULL; }
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static void *other_thread(void *unused) {
    (void)unused;
    pthread_mutex_lock(&gate);   // released once the main thread entered the sandbox
    CHECK("open() on a thread started before the filter", open("/etc/hostname", O_RDONLY), "-1 EPERM");
    pthread_mutex_unlock(&gate);
    return NULL;
}

// Runs `body` in a forked child; returns how the child ended, as text.
static const char *in_child(void (*body)(void)) {
    static char text[64];
    pid_t pid = fork();
    if (pid == 0) { body(); _exit(0); }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) snprintf(text, sizeof text, "killed by %s", sigabbrev_np(WTERMSIG(status)));
    else snprintf(text, sizeof text, "exit %d", WEXITSTATUS(status));
    return text;
}
static void expect_child(const char *what, void (*body)(void), const char *expected) {
    const char *got = in_child(body);
    int ok = strcmp(got, expected) == 0;
    if (!ok) failures++;
    printf("%-48s %-14s %s\n", what, got, ok ? "as expected" : "UNEXPECTED");
}
static void capped_allocation(void) {
    struct rlimit cap = { 32 << 20, RLIM_INFINITY };
    getrlimit(RLIMIT_DATA, &cap);
    cap.rlim_cur = 32 << 20;
    setrlimit(RLIMIT_DATA, &cap);
    thumbd_enter_sandbox();
    _exit(thumbd_test_allocate(64 << 20) == -ENOMEM && thumbd_test_allocate(8 << 20) == 0 ? 0 : 1);
}
static void i386_getpid(void) { long r; __asm__ volatile("int $0x80" : "=a"(r) : "a"(20) : "memory"); }
static void call_abort(void) { abort(); }
static void call_crash(void) { thumbd_test_crash(); }
static void call_open(void) { _exit(open("/etc/hostname", O_RDONLY) < 0 && errno == EPERM ? 0 : 1); }

static void pdeathsig_check(void) {
    // This process becomes the reaper of orphans, so it can see how the grandchild ended.
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    int ready[2];
    if (pipe(ready) != 0) return;
    pid_t middle = fork();
    if (middle == 0) {
        pid_t grandchild = fork();
        if (grandchild == 0) {
            int result = thumbd_worker_die_with_parent(getppid());
            write(ready[1], &result, sizeof result);
            for (;;) pause();
        }
        write(ready[1], &grandchild, sizeof grandchild);
        usleep(200000);   // the grandchild arms itself meanwhile (the parent reads its answer)
        _exit(0);
    }
    pid_t grandchild = 0;
    int armed = 1;
    read(ready[0], &grandchild, sizeof grandchild);
    read(ready[0], &armed, sizeof armed);
    CHECK_THUMBD("thumbd_worker_die_with_parent(real parent)", armed, "0");
    waitpid(middle, NULL, 0);   // the parent dies...
    int status = 0;
    waitpid(grandchild, &status, 0);   // ...and the orphan, re-parented here, ended by:
    printf("%-48s %-14s %s\n", "orphan after its parent exited",
           WIFSIGNALED(status) ? sigabbrev_np(WTERMSIG(status)) : "exited",
           WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? "as expected" : (failures++, "UNEXPECTED"));
    CHECK_THUMBD("thumbd_worker_die_with_parent(wrong parent)", thumbd_worker_die_with_parent(1), "-1 ESRCH");
    prctl(PR_SET_PDEATHSIG, 0);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    pdeathsig_check();
    expect_child("32 MiB cap: allocate 64 MiB ENOMEM, 8 MiB ok", capped_allocation, "exit 0");
    pthread_mutex_lock(&gate);
    pthread_t thread;
    pthread_create(&thread, NULL, other_thread, NULL);

    CHECK_THUMBD("thumbd_enter_sandbox()", thumbd_enter_sandbox(), "0");
    CHECK("open(\"/etc/hostname\")", open("/etc/hostname", O_RDONLY), "-1 EPERM");
    CHECK("openat(AT_FDCWD, \"/etc/hostname\")", openat(AT_FDCWD, "/etc/hostname", O_RDONLY), "-1 EPERM");
    CHECK("fopen(\"/etc/hostname\") (NULL → -1)", fopen("/etc/hostname", "r") ? 0 : -1, "-1 EPERM");
    CHECK("creat(\"/tmp/thumbd-seccomp\")", creat("/tmp/thumbd-seccomp", 0600), "-1 EPERM");
    CHECK("unlink(\"/tmp/thumbd-seccomp\")", unlink("/tmp/thumbd-seccomp"), "-1 EPERM");
    CHECK("mkdir(\"/tmp/thumbd-seccomp-dir\")", mkdir("/tmp/thumbd-seccomp-dir", 0700), "-1 EPERM");
    CHECK("socket(AF_INET, SOCK_STREAM)", socket(AF_INET, SOCK_STREAM, 0), "-1 EPERM");
    CHECK("socket(AF_UNIX, SOCK_DGRAM)", socket(AF_UNIX, SOCK_DGRAM, 0), "-1 EPERM");
    int pair[2];
    CHECK("socketpair(AF_UNIX)", socketpair(AF_UNIX, SOCK_SEQPACKET, 0, pair), "-1 EPERM");
    char *argv[] = { "/bin/true", NULL };
    CHECK("execve(\"/bin/true\")", execve("/bin/true", argv, argv + 1), "-1 EPERM");
    struct rlimit limit;
    CHECK("getrlimit(RLIMIT_DATA) (prlimit64 NULL new)", getrlimit(RLIMIT_DATA, &limit), "0");
    struct rlimit raised = { RLIM_INFINITY, RLIM_INFINITY };
    CHECK("prlimit(0, RLIMIT_DATA, raise) (prlimit64)", prlimit(0, RLIMIT_DATA, &raised, NULL), "-1 EPERM");
    CHECK("prlimit(0, RLIMIT_DATA, same limit)", prlimit(0, RLIMIT_DATA, &limit, NULL), "-1 EPERM");
    CHECK("setrlimit syscall (raw)", syscall(SYS_setrlimit, RLIMIT_DATA, &raised), "-1 EPERM");
    CHECK("ptrace(PTRACE_TRACEME)", syscall(SYS_ptrace, 0, 0, 0, 0), "-1 EPERM");
    char byte = 0;
    struct iovec local = { &byte, 1 }, remote = { &byte, 1 };
    CHECK("process_vm_readv(parent)", process_vm_readv(getppid(), &local, 1, &remote, 1, 0), "-1 EPERM");
    CHECK("io_uring_setup", syscall(__NR_io_uring_setup, 8, NULL), "-1 EPERM");
    CHECK("x32 getpid (nr | 0x40000000)", syscall(0x40000000 | __NR_getpid), "-1 EPERM");
    int memory = memfd_create("result", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    CHECK("memfd_create", memory, "ok");
    CHECK("write(memfd)", write(memory, "png", 3), "3");
    CHECK_THUMBD("thumbd_seal(memfd)", thumbd_seal(memory), "0");
    CHECK("write(sealed memfd)", write(memory, "x", 1), "-1 EPERM");
    CHECK_THUMBD("thumbd_test_allocate(64 MiB)", thumbd_test_allocate(64 << 20), "0");
    void *block = malloc(1 << 20);
    CHECK("malloc(1 MiB)", block ? 0 : -1, "0");
    free(block);
    CHECK("mmap(8 MiB anonymous)", mmap(NULL, 8 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED ? -1 : 0, "0");
    CHECK("getpid", getpid(), "ok");
    CHECK("kill(getpid(), 0)", kill(getpid(), 0), "0");
    pthread_t late;
    CHECK("pthread_create after the filter", pthread_create(&late, NULL, sleeper, NULL) == 0 ? 0 : -1, "0");
    pthread_mutex_unlock(&gate);
    pthread_join(thread, NULL);
    expect_child("forked child: open()", call_open, "exit 0");
    expect_child("forked child: abort()", call_abort, "killed by ABRT");
    expect_child("forked child: thumbd_test_crash()", call_crash, "killed by SEGV");
    expect_child("forked child: i386 getpid via int 0x80", i386_getpid, "killed by SYS");
    printf("%d unexpected\n", failures);
    return failures == 0 ? 0 : 1;
}
