#define _GNU_SOURCE
#include "thumbd_sandbox.h"
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int thumbd_channel_pair(int fds[2]) {
    return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) == 0 ? 0 : -errno;
}

// Control buffer for THUMBD_CHANNEL_MAX_FDS descriptors, aligned for cmsghdr.
typedef union {
    char bytes[CMSG_SPACE(sizeof(int) * THUMBD_CHANNEL_MAX_FDS)];
    struct cmsghdr align;
} fd_control;

int thumbd_channel_send(int fd, const void *buf, size_t len, const int *fds, int nfds) {
    if (len == 0 || buf == NULL || nfds < 0 || nfds > THUMBD_CHANNEL_MAX_FDS || (nfds > 0 && fds == NULL)) {
        return -EINVAL;
    }
    struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
    fd_control control;
    if (nfds > 0) {
        memset(&control, 0, sizeof control);
        msg.msg_control = control.bytes;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_RIGHTS;
        cmsg->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * (size_t)nfds);
    }
    ssize_t sent;
    do {
        sent = sendmsg(fd, &msg, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    if (sent < 0) return -errno;
    // A seqpacket frame goes whole or fails; a short count would be a kernel bug.
    return (size_t)sent == len ? 0 : -EMSGSIZE;
}

static int64_t now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

// Closes every descriptor in `fds[0..<count]`.
static void close_all(const int *fds, int count) {
    for (int i = 0; i < count; i++) close(fds[i]);
}

ssize_t thumbd_channel_recv(int fd, void *buf, size_t cap, int *fds, int maxfds, int *nfds, int timeout_ms) {
    if (nfds == NULL || maxfds < 0 || (maxfds > 0 && fds == NULL) || (cap > 0 && buf == NULL)) return -EINVAL;
    *nfds = 0;
    const int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
    // Bounded by the deadline: every pass either polls with the time left or returns.
    for (;;) {
        int wait = -1;
        if (deadline >= 0) {
            int64_t left = deadline - now_ms();
            wait = left > 0 ? (int)left : 0;
        }
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        int ready = poll(&pfd, 1, wait);
        if (ready < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (ready == 0) return -ETIMEDOUT;
        if (pfd.revents & POLLNVAL) return -EBADF;

        struct iovec iov = { .iov_base = buf, .iov_len = cap };
        fd_control control;
        memset(&control, 0, sizeof control);
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
                              .msg_control = control.bytes, .msg_controllen = sizeof control.bytes };
        // MSG_DONTWAIT: another reader may have taken the frame poll saw; then wait again.
        ssize_t got = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return -errno;
        }

        // Collect every descriptor that arrived before deciding anything, so
        // each error path can close them all.
        int arrived[THUMBD_CHANNEL_MAX_FDS];
        int count = 0;
        for (struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg); cmsg != NULL; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
            if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS) continue;
            size_t n = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < n; i++) {
                int received;
                memcpy(&received, CMSG_DATA(cmsg) + i * sizeof(int), sizeof received);
                if (count < THUMBD_CHANNEL_MAX_FDS) {
                    arrived[count++] = received;
                } else {
                    close(received);   // cannot happen with this buffer size; never leak it anyway
                }
            }
        }
        if (got == 0) {
            close_all(arrived, count);
            return 0;
        }
        if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || count > maxfds) {
            close_all(arrived, count);
            return -EMSGSIZE;
        }
        if (count > 0) memcpy(fds, arrived, sizeof(int) * (size_t)count);
        *nfds = count;
        return got;
    }
}
