/* System calls on region memory: wrappers of the libc calls that read or
 * write a user buffer, so that an access the kernel makes to a region is
 * resolved like a trap first (docs/syscalls.md). Outside the views each
 * wrapper costs one range check. Each wrapper is exported under the libc
 * name (an asm label keeps C prototypes apart) and calls the next definition,
 * found once at load. read/write and friends are async-signal-safe, so these
 * must be too: no malloc, no locks. */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "access.h"
#include "rtl/region.h"

#define RD 0 /* the kernel reads the buffer */
#define WR 1 /* the kernel writes it */
#define MAX_IOV 1024 /* IOV_MAX */

/* The next definitions, resolved at load (never in a handler). */
static struct {
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
} next;

__attribute__((constructor)) static void resolve_next(void)
{
	if (next.read)
		return;
#define RESOLVE(name) (*(void **)&next.name = dlsym(RTLD_NEXT, #name))
	RESOLVE(pread); RESOLVE(readv); RESOLVE(preadv); RESOLVE(preadv2);
	RESOLVE(write); RESOLVE(pwrite); RESOLVE(writev); RESOLVE(pwritev); RESOLVE(pwritev2);
	RESOLVE(recv); RESOLVE(recvfrom); RESOLVE(recvmsg); RESOLVE(send); RESOLVE(sendto);
	RESOLVE(sendmsg); RESOLVE(getdents64); RESOLVE(fstat); RESOLVE(stat); RESOLVE(lstat);
	RESOLVE(fstatat); RESOLVE(statx); RESOLVE(getrandom); RESOLVE(clock_gettime);
	RESOLVE(gettimeofday); RESOLVE(pipe); RESOLVE(pipe2); RESOLVE(socketpair);
	RESOLVE(poll); RESOLVE(ppoll); RESOLVE(select); RESOLVE(pselect); RESOLVE(epoll_wait);
	RESOLVE(epoll_pwait);
	RESOLVE(read); /* last: marks the table complete */
#undef RESOLVE
}

/* A call made before librtl's constructor ran (another library's
 * constructor, a sanitizer's start-up) resolves the table itself. */
#define NEXT(name) (next.name ? next.name : (resolve_next(), next.name))

/* A buffer the kernel will access: its kernel-side address, or NULL
 * (errno EFAULT) if a handler refused. NULL in stays NULL out. */
#define BUF(p, len, dir) rtl_access((p), (len), (dir))

static int refused(const void *in, const void *out)
{
	return in && !out;
}

/* A path name the kernel reads: at most to the end of its view. */
static const char *path_arg(const char *path)
{
	if (!path || !rtl_access_in_views(path, 1))
		return path;
	return rtl_access_resolve(path, 1, RD); /* the region holding it */
}

/* Whether a vector or any of its buffers may touch the views. Reading the
 * vector here is an ordinary access: if it is in a region, it traps and is
 * handled like any other. */
static int iov_in_views(const struct iovec *iov, int cnt)
{
	if (cnt <= 0 || cnt > MAX_IOV)
		return 0; /* the kernel answers EINVAL */
	if (rtl_access_in_views(iov, sizeof(*iov) * (size_t)cnt))
		return 1;
	for (int i = 0; i < cnt; i++)
		if (rtl_access_in_views(iov[i].iov_base, iov[i].iov_len))
			return 1;
	return 0;
}

/* Copy a vector with each buffer resolved; -1 (EFAULT) if one is refused. */
static int iov_resolve(const struct iovec *iov, int cnt, int dir,
                       struct iovec *out)
{
	for (int i = 0; i < cnt; i++) {
		out[i].iov_len = iov[i].iov_len;
		out[i].iov_base = BUF(iov[i].iov_base, iov[i].iov_len, dir);
		if (refused(iov[i].iov_base, out[i].iov_base))
			return -1;
	}
	return 0;
}

/* The vector calls, slow path: kind picks the call. Kept out of line so the
 * fast path's frame holds no copy of a vector. */
enum vec_call { V_READV, V_PREADV, V_PREADV2, V_WRITEV, V_PWRITEV, V_PWRITEV2 };

__attribute__((noinline)) static ssize_t vec_slow(enum vec_call kind, int fd,
                                                  const struct iovec *iov,
                                                  int cnt, off_t off, int flags)
{
	struct iovec k[MAX_IOV];
	int dir = kind <= V_PREADV2 ? WR : RD;

	if (iov_resolve(iov, cnt, dir, k) < 0)
		return -1;
	switch (kind) {
	case V_READV: return NEXT(readv)(fd, k, cnt);
	case V_PREADV: return NEXT(preadv)(fd, k, cnt, off);
	case V_PREADV2: return NEXT(preadv2)(fd, k, cnt, off, flags);
	case V_WRITEV: return NEXT(writev)(fd, k, cnt);
	case V_PWRITEV: return NEXT(pwritev)(fd, k, cnt, off);
	case V_PWRITEV2: return NEXT(pwritev2)(fd, k, cnt, off, flags);
	}
	return -1;
}

/* Whether any part of a message header may touch the views. */
static int msg_in_views(const struct msghdr *m)
{
	return rtl_access_in_views(m->msg_name, m->msg_namelen) ||
	       rtl_access_in_views(m->msg_control, m->msg_controllen) ||
	       (m->msg_iovlen <= MAX_IOV && iov_in_views(m->msg_iov, (int)m->msg_iovlen));
}

__attribute__((noinline)) static ssize_t msg_slow(int recv, int fd,
                                                  struct msghdr *msg, int flags)
{
	struct iovec iov[MAX_IOV];
	struct msghdr k = *msg;
	int dir = recv ? WR : RD;
	ssize_t n;

	k.msg_name = BUF(msg->msg_name, msg->msg_namelen, dir);
	k.msg_control = BUF(msg->msg_control, msg->msg_controllen, dir);
	if (refused(msg->msg_name, k.msg_name) ||
	    refused(msg->msg_control, k.msg_control))
		return -1;
	if (msg->msg_iovlen <= MAX_IOV) {
		if (iov_resolve(msg->msg_iov, (int)msg->msg_iovlen, dir, iov) < 0)
			return -1;
		k.msg_iov = iov;
	}
	if (!recv)
		return NEXT(sendmsg)(fd, &k, flags);
	n = NEXT(recvmsg)(fd, &k, flags);
	/* The kernel updated these in our copy of the header. */
	msg->msg_namelen = k.msg_namelen;
	msg->msg_controllen = k.msg_controllen;
	msg->msg_flags = k.msg_flags;
	return n;
}

/* ---- reads into user memory ---- */

RTL_API ssize_t rtl_sys_read(int fd, void *buf, size_t n) __asm__("read");
ssize_t rtl_sys_read(int fd, void *buf, size_t n)
{
	void *k = BUF(buf, n, WR);
	return refused(buf, k) ? -1 : NEXT(read)(fd, k, n);
}

RTL_API ssize_t rtl_sys_pread(int fd, void *buf, size_t n, off_t off) __asm__("pread");
ssize_t rtl_sys_pread(int fd, void *buf, size_t n, off_t off)
{
	void *k = BUF(buf, n, WR);
	return refused(buf, k) ? -1 : NEXT(pread)(fd, k, n, off);
}
extern RTL_API __typeof__(rtl_sys_pread) rtl_sys_pread64 __asm__("pread64")
	__attribute__((alias("pread")));

RTL_API ssize_t rtl_sys_readv(int fd, const struct iovec *iov, int cnt) __asm__("readv");
ssize_t rtl_sys_readv(int fd, const struct iovec *iov, int cnt)
{
	if (!iov_in_views(iov, cnt))
		return NEXT(readv)(fd, iov, cnt);
	return vec_slow(V_READV, fd, iov, cnt, 0, 0);
}

RTL_API ssize_t rtl_sys_preadv(int fd, const struct iovec *iov, int cnt, off_t off) __asm__("preadv");
ssize_t rtl_sys_preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
	if (!iov_in_views(iov, cnt))
		return NEXT(preadv)(fd, iov, cnt, off);
	return vec_slow(V_PREADV, fd, iov, cnt, off, 0);
}
extern RTL_API __typeof__(rtl_sys_preadv) rtl_sys_preadv64 __asm__("preadv64")
	__attribute__((alias("preadv")));

RTL_API ssize_t rtl_sys_preadv2(int fd, const struct iovec *iov, int cnt, off_t off,
                        int flags) __asm__("preadv2");
ssize_t rtl_sys_preadv2(int fd, const struct iovec *iov, int cnt, off_t off,
                        int flags)
{
	if (!iov_in_views(iov, cnt))
		return NEXT(preadv2)(fd, iov, cnt, off, flags);
	return vec_slow(V_PREADV2, fd, iov, cnt, off, flags);
}

RTL_API ssize_t rtl_sys_recv(int fd, void *buf, size_t n, int flags) __asm__("recv");
ssize_t rtl_sys_recv(int fd, void *buf, size_t n, int flags)
{
	void *k = BUF(buf, n, WR);
	return refused(buf, k) ? -1 : NEXT(recv)(fd, k, n, flags);
}

RTL_API ssize_t rtl_sys_recvfrom(int fd, void *buf, size_t n, int flags,
                         struct sockaddr *addr, socklen_t *alen) __asm__("recvfrom");
ssize_t rtl_sys_recvfrom(int fd, void *buf, size_t n, int flags,
                         struct sockaddr *addr, socklen_t *alen)
{
	void *k = BUF(buf, n, WR);
	socklen_t *kl = BUF(alen, sizeof(*alen), WR);
	struct sockaddr *ka = addr && kl ? BUF(addr, *kl, WR) : addr;

	if (refused(buf, k) || refused(alen, kl) || refused(addr, ka))
		return -1;
	return NEXT(recvfrom)(fd, k, n, flags, ka, kl);
}

RTL_API ssize_t rtl_sys_recvmsg(int fd, struct msghdr *msg, int flags) __asm__("recvmsg");
ssize_t rtl_sys_recvmsg(int fd, struct msghdr *msg, int flags)
{
	if (!msg_in_views(msg))
		return NEXT(recvmsg)(fd, msg, flags);
	return msg_slow(1, fd, msg, flags);
}

RTL_API ssize_t rtl_sys_getdents64(int fd, void *buf, size_t n) __asm__("getdents64");
ssize_t rtl_sys_getdents64(int fd, void *buf, size_t n)
{
	void *k = BUF(buf, n, WR);
	return refused(buf, k) ? -1 : NEXT(getdents64)(fd, k, n);
}

RTL_API ssize_t rtl_sys_getrandom(void *buf, size_t n, unsigned flags) __asm__("getrandom");
ssize_t rtl_sys_getrandom(void *buf, size_t n, unsigned flags)
{
	void *k = BUF(buf, n, WR);
	return refused(buf, k) ? -1 : NEXT(getrandom)(k, n, flags);
}

/* ---- results written into user memory ---- */

RTL_API int rtl_sys_fstat(int fd, struct stat *st) __asm__("fstat");
int rtl_sys_fstat(int fd, struct stat *st)
{
	struct stat *k = BUF(st, sizeof(*st), WR);
	return refused(st, k) ? -1 : NEXT(fstat)(fd, k);
}
extern RTL_API __typeof__(rtl_sys_fstat) rtl_sys_fstat64 __asm__("fstat64")
	__attribute__((alias("fstat")));

RTL_API int rtl_sys_stat(const char *path, struct stat *st) __asm__("stat");
int rtl_sys_stat(const char *path, struct stat *st)
{
	struct stat *k = BUF(st, sizeof(*st), WR);
	const char *kp = path_arg(path);
	return refused(st, k) || refused(path, kp) ? -1 : NEXT(stat)(kp, k);
}
extern RTL_API __typeof__(rtl_sys_stat) rtl_sys_stat64 __asm__("stat64")
	__attribute__((alias("stat")));

RTL_API int rtl_sys_lstat(const char *path, struct stat *st) __asm__("lstat");
int rtl_sys_lstat(const char *path, struct stat *st)
{
	struct stat *k = BUF(st, sizeof(*st), WR);
	const char *kp = path_arg(path);
	return refused(st, k) || refused(path, kp) ? -1 : NEXT(lstat)(kp, k);
}
extern RTL_API __typeof__(rtl_sys_lstat) rtl_sys_lstat64 __asm__("lstat64")
	__attribute__((alias("lstat")));

RTL_API int rtl_sys_fstatat(int dfd, const char *path, struct stat *st, int flags) __asm__("fstatat");
int rtl_sys_fstatat(int dfd, const char *path, struct stat *st, int flags)
{
	struct stat *k = BUF(st, sizeof(*st), WR);
	const char *kp = path_arg(path);
	return refused(st, k) || refused(path, kp) ? -1 : NEXT(fstatat)(dfd, kp, k, flags);
}
extern RTL_API __typeof__(rtl_sys_fstatat) rtl_sys_fstatat64 __asm__("fstatat64")
	__attribute__((alias("fstatat")));

RTL_API int rtl_sys_statx(int dfd, const char *path, int flags, unsigned mask,
                  struct statx *stx) __asm__("statx");
int rtl_sys_statx(int dfd, const char *path, int flags, unsigned mask,
                  struct statx *stx)
{
	struct statx *k = BUF(stx, sizeof(*stx), WR);
	const char *kp = path_arg(path);
	return refused(stx, k) || refused(path, kp) ? -1
	                                            : NEXT(statx)(dfd, kp, flags, mask, k);
}

RTL_API int rtl_sys_clock_gettime(clockid_t clk, struct timespec *ts) __asm__("clock_gettime");
int rtl_sys_clock_gettime(clockid_t clk, struct timespec *ts)
{
	struct timespec *k = BUF(ts, sizeof(*ts), WR);
	return refused(ts, k) ? -1 : NEXT(clock_gettime)(clk, k);
}

RTL_API int rtl_sys_gettimeofday(struct timeval *tv, void *tz) __asm__("gettimeofday");
int rtl_sys_gettimeofday(struct timeval *tv, void *tz)
{
	struct timeval *k = BUF(tv, sizeof(*tv), WR);
	void *kz = BUF(tz, sizeof(struct timezone), WR);
	return refused(tv, k) || refused(tz, kz) ? -1 : NEXT(gettimeofday)(k, kz);
}

RTL_API int rtl_sys_pipe(int fds[2]) __asm__("pipe");
int rtl_sys_pipe(int fds[2])
{
	int *k = BUF(fds, 2 * sizeof(int), WR);
	return refused(fds, k) ? -1 : NEXT(pipe)(k);
}

RTL_API int rtl_sys_pipe2(int fds[2], int flags) __asm__("pipe2");
int rtl_sys_pipe2(int fds[2], int flags)
{
	int *k = BUF(fds, 2 * sizeof(int), WR);
	return refused(fds, k) ? -1 : NEXT(pipe2)(k, flags);
}

RTL_API int rtl_sys_socketpair(int d, int t, int p, int sv[2]) __asm__("socketpair");
int rtl_sys_socketpair(int d, int t, int p, int sv[2])
{
	int *k = BUF(sv, 2 * sizeof(int), WR);
	return refused(sv, k) ? -1 : NEXT(socketpair)(d, t, p, k);
}

RTL_API int rtl_sys_poll(struct pollfd *fds, nfds_t n, int timeout) __asm__("poll");
int rtl_sys_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct pollfd *k = BUF(fds, n * sizeof(*fds), WR);
	return refused(fds, k) ? -1 : NEXT(poll)(k, n, timeout);
}

RTL_API int rtl_sys_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
                  const sigset_t *mask) __asm__("ppoll");
int rtl_sys_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
                  const sigset_t *mask)
{
	struct pollfd *k = BUF(fds, n * sizeof(*fds), WR);
	const struct timespec *kt = BUF(ts, sizeof(*ts), RD);
	const sigset_t *km = BUF(mask, sizeof(*mask), RD);
	if (refused(fds, k) || refused(ts, kt) || refused(mask, km))
		return -1;
	return NEXT(ppoll)(k, n, kt, km);
}

static int fdsets(int n, fd_set **r, fd_set **w, fd_set **e)
{
	size_t len = ((size_t)(n > 0 ? n : 0) + 7) / 8;
	fd_set *kr = BUF(*r, len, WR), *kw = BUF(*w, len, WR), *ke = BUF(*e, len, WR);

	if (refused(*r, kr) || refused(*w, kw) || refused(*e, ke))
		return -1;
	*r = kr;
	*w = kw;
	*e = ke;
	return 0;
}

RTL_API int rtl_sys_select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv) __asm__("select");
int rtl_sys_select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	struct timeval *kt = BUF(tv, sizeof(*tv), WR);
	if (fdsets(n, &r, &w, &e) < 0 || refused(tv, kt))
		return -1;
	return NEXT(select)(n, r, w, e, kt);
}

RTL_API int rtl_sys_pselect(int n, fd_set *r, fd_set *w, fd_set *e,
                    const struct timespec *ts, const sigset_t *mask) __asm__("pselect");
int rtl_sys_pselect(int n, fd_set *r, fd_set *w, fd_set *e,
                    const struct timespec *ts, const sigset_t *mask)
{
	const struct timespec *kt = BUF(ts, sizeof(*ts), RD);
	const sigset_t *km = BUF(mask, sizeof(*mask), RD);
	if (fdsets(n, &r, &w, &e) < 0 || refused(ts, kt) || refused(mask, km))
		return -1;
	return NEXT(pselect)(n, r, w, e, kt, km);
}

RTL_API int rtl_sys_epoll_wait(int ep, struct epoll_event *ev, int max, int timeout) __asm__("epoll_wait");
int rtl_sys_epoll_wait(int ep, struct epoll_event *ev, int max, int timeout)
{
	struct epoll_event *k = BUF(ev, (size_t)(max > 0 ? max : 0) * sizeof(*ev), WR);
	return refused(ev, k) ? -1 : NEXT(epoll_wait)(ep, k, max, timeout);
}

RTL_API int rtl_sys_epoll_pwait(int ep, struct epoll_event *ev, int max, int timeout,
                        const sigset_t *mask) __asm__("epoll_pwait");
int rtl_sys_epoll_pwait(int ep, struct epoll_event *ev, int max, int timeout,
                        const sigset_t *mask)
{
	struct epoll_event *k = BUF(ev, (size_t)(max > 0 ? max : 0) * sizeof(*ev), WR);
	const sigset_t *km = BUF(mask, sizeof(*mask), RD);
	return refused(ev, k) || refused(mask, km) ? -1
	                                           : NEXT(epoll_pwait)(ep, k, max, timeout, km);
}

/* ---- writes from user memory ---- */

RTL_API ssize_t rtl_sys_write(int fd, const void *buf, size_t n) __asm__("write");
ssize_t rtl_sys_write(int fd, const void *buf, size_t n)
{
	const void *k = BUF(buf, n, RD);
	return refused(buf, k) ? -1 : NEXT(write)(fd, k, n);
}

RTL_API ssize_t rtl_sys_pwrite(int fd, const void *buf, size_t n, off_t off) __asm__("pwrite");
ssize_t rtl_sys_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	const void *k = BUF(buf, n, RD);
	return refused(buf, k) ? -1 : NEXT(pwrite)(fd, k, n, off);
}
extern RTL_API __typeof__(rtl_sys_pwrite) rtl_sys_pwrite64 __asm__("pwrite64")
	__attribute__((alias("pwrite")));

RTL_API ssize_t rtl_sys_writev(int fd, const struct iovec *iov, int cnt) __asm__("writev");
ssize_t rtl_sys_writev(int fd, const struct iovec *iov, int cnt)
{
	if (!iov_in_views(iov, cnt))
		return NEXT(writev)(fd, iov, cnt);
	return vec_slow(V_WRITEV, fd, iov, cnt, 0, 0);
}

RTL_API ssize_t rtl_sys_pwritev(int fd, const struct iovec *iov, int cnt, off_t off) __asm__("pwritev");
ssize_t rtl_sys_pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	if (!iov_in_views(iov, cnt))
		return NEXT(pwritev)(fd, iov, cnt, off);
	return vec_slow(V_PWRITEV, fd, iov, cnt, off, 0);
}
extern RTL_API __typeof__(rtl_sys_pwritev) rtl_sys_pwritev64 __asm__("pwritev64")
	__attribute__((alias("pwritev")));

RTL_API ssize_t rtl_sys_pwritev2(int fd, const struct iovec *iov, int cnt, off_t off,
                         int flags) __asm__("pwritev2");
ssize_t rtl_sys_pwritev2(int fd, const struct iovec *iov, int cnt, off_t off,
                         int flags)
{
	if (!iov_in_views(iov, cnt))
		return NEXT(pwritev2)(fd, iov, cnt, off, flags);
	return vec_slow(V_PWRITEV2, fd, iov, cnt, off, flags);
}

RTL_API ssize_t rtl_sys_send(int fd, const void *buf, size_t n, int flags) __asm__("send");
ssize_t rtl_sys_send(int fd, const void *buf, size_t n, int flags)
{
	const void *k = BUF(buf, n, RD);
	return refused(buf, k) ? -1 : NEXT(send)(fd, k, n, flags);
}

RTL_API ssize_t rtl_sys_sendto(int fd, const void *buf, size_t n, int flags,
                       const struct sockaddr *addr, socklen_t alen) __asm__("sendto");
ssize_t rtl_sys_sendto(int fd, const void *buf, size_t n, int flags,
                       const struct sockaddr *addr, socklen_t alen)
{
	const void *k = BUF(buf, n, RD);
	const struct sockaddr *ka = BUF(addr, alen, RD);
	return refused(buf, k) || refused(addr, ka) ? -1
	                                            : NEXT(sendto)(fd, k, n, flags, ka, alen);
}

RTL_API ssize_t rtl_sys_sendmsg(int fd, const struct msghdr *msg, int flags) __asm__("sendmsg");
ssize_t rtl_sys_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	if (!msg_in_views(msg))
		return NEXT(sendmsg)(fd, msg, flags);
	return msg_slow(0, fd, (struct msghdr *)msg, flags);
}
