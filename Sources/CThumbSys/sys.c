#define _GNU_SOURCE
#include "thumbd_sys.h"
#include <pthread.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>

void thumbd_name_this_thread(const char *name) {
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = 0;
    pthread_setname_np(pthread_self(), shortened);
}

int thumbd_accept_nonblocking(int fd, struct sockaddr *addr, socklen_t *len) {
    return accept4(fd, addr, len, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int thumbd_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

int thumbd_epoll_add(int epfd, int fd, uint64_t id) {
    struct epoll_event event = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.u64 = id };
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &event);
}

int thumbd_epoll_remove(int epfd, int fd) {
    struct epoll_event unused = { 0 };   // kernels before 2.6.9 wanted non-NULL
    return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, &unused);
}

int thumbd_epoll_ready(int epfd, thumbd_epoll_event *out, int max) {
    struct epoll_event events[256];
    if (max > 256) max = 256;
    int n = epoll_wait(epfd, events, max, 0);
    for (int i = 0; i < n; i++) {
        uint32_t e = events[i].events, bits = 0;
        if (e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) bits |= THUMBD_EPOLL_READABLE;
        if (e & (EPOLLOUT | EPOLLHUP | EPOLLERR)) bits |= THUMBD_EPOLL_WRITABLE;
        if (e & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) bits |= THUMBD_EPOLL_HANGUP;
        out[i].id = events[i].data.u64;
        out[i].events = bits;
    }
    return n;
}

int thumbd_sys_memfd(const char *name) {
    return memfd_create(name, MFD_CLOEXEC);
}

#if defined(__GLIBC__)
#include <malloc.h>
#endif

size_t thumbd_heap_free_bytes(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    struct mallinfo2 info = mallinfo2();
    return info.fordblks;
#else
    return 0;
#endif
}
