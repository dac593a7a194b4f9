// A stand-in for a decoder taken over by a crafted image (HostileWorkerTests): preloaded into a test
// daemon (LD_PRELOAD, which its workers inherit, as an attacker's code would already be inside one), it
// wraps libpng's png_read_info. When the PNG being read has a width named in its plan, it does what the
// plan says there, inside the sandboxed worker, and reports the outcome on stderr (the worker's pipe into
// the daemon's log) as "hostile: ACTION -> RESULT errno ERRNO". Test code only: never built into thumbd.
//
// The plan is the file "hostile.plan" beside this library, read once at load (before the sandbox, as a
// real attacker's preparation could be): lines of "WIDTH ACTION [NUMBER]".
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct { unsigned long width; char action[32]; long long number; } step;
static step plan[64];
static int steps;
static void (*real_read_info)(void *, void *);
static unsigned int (*real_width)(void *, void *);

__attribute__((constructor)) static void load_plan(void) {
    real_read_info = (void (*)(void *, void *))dlsym(RTLD_NEXT, "png_read_info");
    real_width = (unsigned int (*)(void *, void *))dlsym(RTLD_NEXT, "png_get_image_width");
    Dl_info self;
    if (dladdr((void *)load_plan, &self) == 0 || self.dli_fname == NULL) return;
    char path[4096];
    snprintf(path, sizeof path, "%s", self.dli_fname);
    char *slash = strrchr(path, '/');
    if (slash == NULL) return;
    snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "hostile.plan");
    FILE *file = fopen(path, "r");
    if (file == NULL) return;
    char line[128];
    while (steps < 64 && fgets(line, sizeof line, file) != NULL) {
        if (sscanf(line, "%lu %31s %lld", &plan[steps].width, plan[steps].action, &plan[steps].number) >= 2) steps++;
    }
    fclose(file);
}

static void report(const char *action, long result, int error) {
    fprintf(stderr, "hostile: %s -> %ld errno %d\n", action, result, error);
}

static void *idle_thread(void *unused) { return unused; }

static void act(const step *s) {
    const char *a = s->action;
    long r;
    errno = 0;
    fprintf(stderr, "hostile: trying %s\n", a);
    if (strcmp(a, "open") == 0) { r = open("/etc/passwd", O_RDONLY); report(a, r, errno); }
    else if (strcmp(a, "stat-path") == 0) { struct stat st; r = stat("/etc/passwd", &st); report(a, r, errno); }
    else if (strcmp(a, "socket") == 0) { r = socket(AF_INET, SOCK_STREAM, 0); report(a, r, errno); }
    else if (strcmp(a, "fork") == 0) {
        r = fork();
        if (r == 0) { for (;;) pause(); }   // a survivor, if the filter let it be born
        report(a, r, errno);
    }
    else if (strcmp(a, "clone-process") == 0) {
        r = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
        if (r == 0) { for (;;) pause(); }
        report(a, r, errno);
    }
    else if (strcmp(a, "clone3") == 0) { r = syscall(SYS_clone3, NULL, 0); report(a, r, errno); }
    else if (strcmp(a, "thread") == 0) {
        pthread_t thread;
        r = pthread_create(&thread, NULL, idle_thread, NULL);
        if (r == 0) pthread_join(thread, NULL);
        report(a, r, r);
    }
    else if (strcmp(a, "rlimit") == 0) {
        struct rlimit none = { RLIM_INFINITY, RLIM_INFINITY };
        r = setrlimit(RLIMIT_DATA, &none); report(a, r, errno);
    }
    else if (strcmp(a, "dumpable") == 0) { r = prctl(PR_SET_DUMPABLE, 1, 0, 0, 0); report(a, r, errno); }
    else if (strcmp(a, "truncate-output") == 0) { r = ftruncate(2, 0); report(a, r, errno); }
    else if (strcmp(a, "spam") == 0) {
        for (long long i = 0; i < s->number; i++) fprintf(stderr, "hostile spam line %lld\n", i);
        report(a, 0, 0);
    }
    // Attack-only calls: the worker must die of SIGSYS before a report.
    else if (strcmp(a, "unshare") == 0) { r = unshare(CLONE_NEWUSER | CLONE_NEWNS); report(a, r, errno); }
    else if (strcmp(a, "fanotify") == 0) { r = fanotify_init(FAN_CLASS_NOTIF, O_RDONLY); report(a, r, errno); }
    else if (strcmp(a, "execve") == 0) {
        char *const argv[] = { "/bin/true", NULL };
        r = execve("/bin/true", argv, NULL); report(a, r, errno);
    }
    else if (strcmp(a, "ptrace") == 0) { r = ptrace(PTRACE_ATTACH, getppid(), 0, 0); report(a, r, errno); }
    else if (strcmp(a, "kill-parent") == 0) { r = kill(getppid(), SIGTERM); report(a, r, errno); }
    else if (strcmp(a, "setuid") == 0) { r = setuid(0); report(a, r, errno); }
    else if (strcmp(a, "sigsys-handler") == 0) { r = (long)signal(SIGSYS, SIG_IGN); report(a, r, errno); }
    // The sandbox's own bounds, as the daemon's tests need them.
    else if (strcmp(a, "hang") == 0) { for (;;) pause(); }
    else if (strcmp(a, "crash") == 0) { volatile int *volatile nowhere = NULL; *nowhere = 1; }
    // Allocations past the worker's memory cap through the runtimes' own paths: libstdc++'s operator new
    // (the new-handler's case) and the Swift runtime's allocator (a Swift array's case).
    else if (strcmp(a, "cxx-new") == 0) {
        void *(*new_bytes)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "_Znwm");
        void *memory = new_bytes != NULL ? new_bytes((size_t)s->number) : NULL;
        report(a, memory != NULL ? 0 : -1, new_bytes != NULL ? 0 : ENOENT);
    }
    else if (strcmp(a, "swift-alloc") == 0) {
        void *(*slow_alloc)(size_t, size_t) = (void *(*)(size_t, size_t))dlsym(RTLD_DEFAULT, "swift_slowAlloc");
        void *memory = slow_alloc != NULL ? slow_alloc((size_t)s->number, 15) : NULL;
        report(a, memory != NULL ? 0 : -1, slow_alloc != NULL ? 0 : ENOENT);
    }
    else if (strcmp(a, "allocate") == 0) {
        volatile unsigned char *memory = malloc((size_t)s->number);
        if (memory != NULL) for (long long i = 0; i < s->number; i += 4096) memory[i] = 1;
        report(a, memory != NULL ? 0 : -1, memory != NULL ? 0 : ENOMEM);
        free((void *)memory);
    }
    else report(a, -1, EINVAL);
}

void png_read_info(void *png, void *info) {
    real_read_info(png, info);
    unsigned long width = real_width(png, info);
    for (int i = 0; i < steps; i++) {
        if (plan[i].width == width) act(&plan[i]);
    }
}
