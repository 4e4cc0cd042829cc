/* What the system-call wrappers share (sys_*.c, docs/syscalls.md): the next
 * definitions of the wrapped calls, and buffer resolution. Everything here
 * may run in a signal handler: no malloc, no locks. */
#ifndef RTL_SYSCALLS_H
#define RTL_SYSCALLS_H

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>

#include <rtl/region.h>
#include "interpose/access.h"
#include "interpose/sigsys.h"

#define RD 0         /* the kernel reads the buffer */
#define WR 1         /* the kernel writes it */
#define MAX_IOV 1024 /* IOV_MAX */

/* The next definitions, resolved at load (never in a handler). */
struct rtl_sys_next {
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*pread)(int, void *, size_t, off_t);
	ssize_t (*readv)(int, const struct iovec *, int);
	ssize_t (*preadv)(int, const struct iovec *, int, off_t);
	ssize_t (*preadv2)(int, const struct iovec *, int, off_t, int);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*pwrite)(int, const void *, size_t, off_t);
	ssize_t (*writev)(int, const struct iovec *, int);
	ssize_t (*pwritev)(int, const struct iovec *, int, off_t);
	ssize_t (*pwritev2)(int, const struct iovec *, int, off_t, int);
	ssize_t (*recv)(int, void *, size_t, int);
	ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
	ssize_t (*recvmsg)(int, struct msghdr *, int);
	ssize_t (*send)(int, const void *, size_t, int);
	ssize_t (*sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	ssize_t (*getdents64)(int, void *, size_t);
	int (*fstat)(int, struct stat *);
	int (*stat)(const char *, struct stat *);
	int (*lstat)(const char *, struct stat *);
	int (*fstatat)(int, const char *, struct stat *, int);
	int (*statx)(int, const char *, int, unsigned, struct statx *);
	ssize_t (*getrandom)(void *, size_t, unsigned);
	int (*sigaltstack)(const stack_t *, stack_t *);
	int (*clock_gettime)(clockid_t, struct timespec *);
	int (*gettimeofday)(struct timeval *, void *);
	int (*pipe)(int *);
	int (*pipe2)(int *, int);
	int (*socketpair)(int, int, int, int *);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
	int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int (*pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *, const sigset_t *);
	int (*epoll_wait)(int, struct epoll_event *, int, int);
	int (*epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
	size_t (*fread)(void *, size_t, size_t, FILE *);
	size_t (*fread_unlocked)(void *, size_t, size_t, FILE *);
	size_t (*fwrite)(const void *, size_t, size_t, FILE *);
	size_t (*fwrite_unlocked)(const void *, size_t, size_t, FILE *);
	char *(*getcwd)(char *, size_t);
	ssize_t (*readlink)(const char *, char *, size_t);
	ssize_t (*readlinkat)(int, const char *, char *, size_t);
};
extern struct rtl_sys_next rtl_sys_next;

/* Fill rtl_sys_next; idempotent. */
void rtl_sys_resolve(void);

/* A call made before librtl's constructor ran (another library's
 * constructor, a sanitizer's start-up) resolves the table itself. */
#define NEXT(name) (rtl_sys_next.name ? rtl_sys_next.name : (rtl_sys_resolve(), rtl_sys_next.name))

/* A buffer the kernel will access: its kernel-side address, or NULL
 * (errno EFAULT) if a handler refused. NULL in stays NULL out. With the
 * seccomp filter on, the call itself is trapped and its buffers resolved
 * there (sigsys.c): the wrappers step aside, so each is resolved once. */
#define BUF(p, len, dir) \
	(rtl_sigsys_on() ? (void *)(uintptr_t)(p) : rtl_access((p), (len), (dir)))

static inline int refused(const void *in, const void *out)
{
	return in && !out;
}

/* A path name the kernel reads: at most to the end of its view. */
static inline const char *path_arg(const char *path)
{
	if (!path || rtl_sigsys_on() || !rtl_access_in_views(path, 1))
		return path;
	return rtl_access_resolve(path, 1, RD); /* the region holding it */
}

#endif
