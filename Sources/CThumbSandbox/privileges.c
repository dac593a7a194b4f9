#define _GNU_SOURCE
#include "thumbd_sandbox.h"
#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int thumbd_worker_drop_privileges(uid_t uid, gid_t gid) {
    if (uid == 0 || gid == 0) return -EINVAL;
    // The bounding set first: dropping from it needs CAP_SETPCAP, which the uid change takes away.
    // It bounds what an execve could regain (the filter refuses execve too: two locks).
    for (int capability = 0; capability <= 63; capability++) {
        if (prctl(PR_CAPBSET_READ, capability, 0, 0, 0) < 0) break;   // past the kernel's last
        if (prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0) return -errno;
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return -errno;
    // Groups before the gid, the gid before the uid: each later step gives up the right to the earlier.
    // glibc applies each to every thread of the process (there is one here: the caller's).
    if (setgroups(0, NULL) != 0) return -errno;
    if (setresgid(gid, gid, gid) != 0) return -errno;
    if (setresuid(uid, uid, uid) != 0) return -errno;
    // Leaving uid 0 cleared the permitted and effective sets; the inheritable set stays unless emptied.
    struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
    struct __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = { { 0, 0, 0 } };
    if (syscall(SYS_capset, &header, none) != 0) return -errno;

    // Checked, not assumed: every id is the new one, no group is left, no capability is left, and
    // the way back is closed.
    uid_t ruid, euid, suid;
    gid_t rgid, egid, sgid;
    if (getresuid(&ruid, &euid, &suid) != 0 || getresgid(&rgid, &egid, &sgid) != 0) return -errno;
    if (ruid != uid || euid != uid || suid != uid || rgid != gid || egid != gid || sgid != gid) return -EPERM;
    if (getgroups(0, NULL) != 0) return -EPERM;
    struct __user_cap_data_struct left[_LINUX_CAPABILITY_U32S_3] = { { 0, 0, 0 } };
    if (syscall(SYS_capget, &header, left) != 0) return -errno;
    for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
        if (left[i].effective != 0 || left[i].permitted != 0 || left[i].inheritable != 0) return -EPERM;
    }
    if (setuid(0) == 0) return -EPERM;
    return 0;
}

int thumbd_kill_group(pid_t group) {
    if (group <= 1) return -EINVAL;
    return kill(-group, SIGKILL) == 0 ? 0 : -errno;
}

// MARK: Allocation failures

/// libstdc++'s std::set_new_handler, looked up at run time: CThumbSandbox is C, and the C++ runtime is
/// in the process only through the codecs that use it (libheif, libde265, aom).
typedef void (*new_handler)(void);

static void on_failed_new(void) {
    static const char line[] = "thumbd worker: out of memory (operator new)\n";
    ssize_t ignored = write(STDERR_FILENO, line, sizeof line - 1);
    (void)ignored;
    _exit(73);
}

int thumbd_worker_report_allocation_failures(void) {
    new_handler (*set_new_handler)(new_handler) =
        (new_handler (*)(new_handler))dlsym(RTLD_DEFAULT, "_ZSt15set_new_handlerPFvvE");
    if (set_new_handler == NULL) return -ENOENT;
    set_new_handler(on_failed_new);
    return 0;
}
