#ifndef THUMBD_SYS_H
#define THUMBD_SYS_H
// Syscalls and constants Glibc's Swift overlay does not export.
#include <sys/types.h>
#include <sys/socket.h>

/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC: the new fd is ready for a
/// Dispatch source and never leaks into a child process.
int thumbd_accept_nonblocking(int fd, struct sockaddr *addr, socklen_t *len);

#endif
