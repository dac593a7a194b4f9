#define _GNU_SOURCE
#include "thumbd_sandbox.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

// MARK: The spawn itself

static pid_t spawn_now(const char *path, char *const argv[], char *const envp[], int channel_fd, int output_fd) {
    static char *const no_environment[] = { NULL };
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int err = posix_spawn_file_actions_init(&actions);
    if (err != 0) return -err;
    err = posix_spawnattr_init(&attributes);
    if (err != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return -err;
    }
    // In order: the channel first (it may sit on 0-2 in an odd daemon), then
    // stdin, stdout and stderr, then everything above the channel. dup2 clears
    // CLOEXEC on the copy; glibc (2.29+) clears it too when channel_fd is already 3.
    // The output pipe may itself sit on 3 (a daemon whose 0-2 were closed):
    // copied first to 1, and 2 from there, before the channel takes 3.
    err = posix_spawn_file_actions_adddup2(&actions, output_fd, STDOUT_FILENO);
    if (err == 0) err = posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    if (err == 0 && channel_fd <= STDERR_FILENO) err = EINVAL;
    if (err == 0) err = posix_spawn_file_actions_adddup2(&actions, channel_fd, THUMBD_WORKER_CHANNEL_FD);
    if (err == 0) err = posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    if (err == 0) err = posix_spawn_file_actions_addclosefrom_np(&actions, THUMBD_WORKER_CHANNEL_FD + 1);

    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    if (err == 0) err = posix_spawnattr_setsigmask(&attributes, &none);
    if (err == 0) err = posix_spawnattr_setsigdefault(&attributes, &all);
    // Its own process group (pgid = its pid), so the deadline's kill reaches the group.
    if (err == 0) err = posix_spawnattr_setpgroup(&attributes, 0);
    if (err == 0) err = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                                                 POSIX_SPAWN_SETPGROUP);

    pid_t pid = 0;
    if (err == 0) err = posix_spawn(&pid, path, &actions, &attributes, argv, envp != NULL ? envp : no_environment);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return err == 0 ? pid : -err;
}

// MARK: The spawner thread
// PR_SET_PDEATHSIG follows the thread that created the child, not the process,
// so every worker is created by one thread that never exits. Callers hand it a
// request and wait; one request at a time (a spawn takes well under a millisecond).

typedef struct {
    const char *path;
    char *const *argv;
    char *const *envp;
    int channel_fd;
    int output_fd;
    pid_t result;
    int done;
} spawn_request;

static pthread_mutex_t spawner_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t spawner_work = PTHREAD_COND_INITIALIZER;    // a request was posted
static pthread_cond_t spawner_done = PTHREAD_COND_INITIALIZER;    // a request was answered
static pthread_cond_t spawner_free = PTHREAD_COND_INITIALIZER;    // the slot is free again
static spawn_request *pending;
static pthread_once_t spawner_once = PTHREAD_ONCE_INIT;
static int spawner_error;

static void *spawner_main(void *unused) {
    (void)unused;
    pthread_mutex_lock(&spawner_lock);
    for (;;) {   // for the life of the process, by design
        while (pending == NULL || pending->done) pthread_cond_wait(&spawner_work, &spawner_lock);
        spawn_request *request = pending;
        request->result = spawn_now(request->path, request->argv, request->envp, request->channel_fd,
                                    request->output_fd);
        request->done = 1;
        pthread_cond_broadcast(&spawner_done);
    }
    return NULL;
}

static void start_spawner(void) {
    // Every signal blocked in the spawner, so the daemon's signal handling
    // never lands on it; the children get an empty mask from the attributes.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    spawner_error = pthread_create(&thread, &attributes, spawner_main, NULL);
    pthread_attr_destroy(&attributes);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (spawner_error == 0) pthread_setname_np(thread, "thumbd-spawner");
}

pid_t thumbd_spawn_worker(const char *path, char *const argv[], char *const envp[], int channel_fd, int output_fd) {
    if (path == NULL || argv == NULL || channel_fd < 0 || output_fd < 0) return -EINVAL;
    pthread_once(&spawner_once, start_spawner);
    if (spawner_error != 0) return -spawner_error;
    spawn_request request = { .path = path, .argv = argv, .envp = envp, .channel_fd = channel_fd,
                              .output_fd = output_fd };
    pthread_mutex_lock(&spawner_lock);
    while (pending != NULL) pthread_cond_wait(&spawner_free, &spawner_lock);
    pending = &request;
    pthread_cond_signal(&spawner_work);
    while (!request.done) pthread_cond_wait(&spawner_done, &spawner_lock);
    pending = NULL;
    pthread_cond_signal(&spawner_free);
    pthread_mutex_unlock(&spawner_lock);
    return request.result;
}

// MARK: The worker's side and the daemon's handle

int thumbd_worker_die_with_parent(pid_t expected_parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return -errno;
    return getppid() == expected_parent ? 0 : -ESRCH;
}

int thumbd_pidfd_open(pid_t pid) {
    int fd = pidfd_open(pid, 0);
    if (fd < 0) return -errno;
    // pidfd_open sets CLOEXEC itself (Linux 5.3+); nothing to add.
    return fd;
}

int thumbd_pidfd_kill(int pidfd) {
    return pidfd_send_signal(pidfd, SIGKILL, NULL, 0) == 0 ? 0 : -errno;
}

int thumbd_pidfd_wait(int pidfd, int nohang, int keep, int *signaled, int *value) {
    siginfo_t info = { 0 };
    int result;
    do {
        result = waitid(P_PIDFD, (id_t)pidfd, &info, WEXITED | (nohang ? WNOHANG : 0) | (keep ? WNOWAIT : 0));
    } while (result < 0 && errno == EINTR);
    if (result < 0) return -errno;
    if (info.si_pid == 0) return 0;   // WNOHANG and still running
    *signaled = info.si_code == CLD_EXITED ? 0 : 1;
    *value = info.si_status;
    return 1;
}

int thumbd_output_pipe(int fds[2]) {
    if (pipe2(fds, O_CLOEXEC) != 0) return -errno;
    int flags = fcntl(fds[0], F_GETFL);
    if (flags < 0 || fcntl(fds[0], F_SETFL, flags | O_NONBLOCK) != 0) {
        int err = errno;
        close(fds[0]);
        close(fds[1]);
        return -err;
    }
    return 0;
}
