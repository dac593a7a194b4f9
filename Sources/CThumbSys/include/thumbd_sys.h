#ifndef THUMBD_SYS_H
#define THUMBD_SYS_H
// Syscalls and constants Glibc's Swift overlay does not export.
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>

/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC: the new fd is ready for a
/// Dispatch source and never leaks into a child process.
int thumbd_accept_nonblocking(int fd, struct sockaddr *addr, socklen_t *len);

/// One ready socket from `thumbd_epoll_ready`: the id it was registered with
/// and what it is ready for. (struct epoll_event is packed on x86_64, which
/// Swift does not import faithfully, hence this plain copy.)
typedef struct {
    uint64_t id;
    uint32_t events;
} thumbd_epoll_event;

/// Bits of `thumbd_epoll_event.events`.
enum {
    /// Data, end of stream, a reset or an error: a read will not block.
    THUMBD_EPOLL_READABLE = 1,
    /// Room in the send buffer, or an error: a write will not block.
    THUMBD_EPOLL_WRITABLE = 2,
    /// The peer shut down its side or the socket failed: reading must go on
    /// to end of stream even after a short read.
    THUMBD_EPOLL_HANGUP = 4,
};

/// epoll_create1(EPOLL_CLOEXEC).
int thumbd_epoll_create(void);

/// Registers `fd` once, edge-triggered, for reading, writing and hang-up,
/// with `id` as its data.
int thumbd_epoll_add(int epfd, int fd, uint64_t id);

/// Removes `fd` (before it is closed).
int thumbd_epoll_remove(int epfd, int fd);

/// epoll_wait with timeout 0 into `out` (at most `max`, at most 256);
/// returns the count, or -1 with errno.
int thumbd_epoll_ready(int epfd, thumbd_epoll_event *out, int max);

/// Names the calling thread for the kernel (top -H, perf, /proc/.../comm):
/// at most 15 bytes are kept. Foundation's Thread.name does not reach the
/// kernel on Linux, and pthread_setname_np needs _GNU_SOURCE, which Swift's
/// Glibc module does not define.
void thumbd_name_this_thread(const char *name);

/// memfd_create(name, MFD_CLOEXEC): a file in anonymous memory, for a
/// download no disk could take (SourcesAndLimits.md § Downloads).
int thumbd_sys_memfd(const char *name);

/// Bytes the C heap holds free (glibc's `mallinfo2().fordblks`: freed chunks
/// not yet given back to the kernel); 0 where the C library cannot say.
size_t thumbd_heap_free_bytes(void);

#endif
