/* Wrapped calls whose results the kernel writes into user memory: the stat
 * family, clocks, descriptor pairs, and the poll/select/epoll arrays. */
#include <unistd.h>

#include "interpose/syscalls.h"

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

/* The alternate signal stack: the kernel writes signal frames there later,
 * when a signal comes, with no wrapper to see it; a program's malloc'ed
 * stack may be a region under the preload (gawk's, through libsigsegv),
 * read-only or no-access. It is resolved as a write now and the kernel gets
 * the same bytes through the RW view, or, for the preload's aliases, slots
 * and page copies, the block's own address, granted and pinned for as
 * long as it is this thread's stack: an epoch re-protecting it would leave
 * the kernel no room for the next frame, and the process would die of a
 * SIGSEGV no handler sees (gawk under alias with epoch = 1ms). The program
 * is told back its own address. A stack the region refuses goes to the
 * kernel as it was. */
static __thread struct {
	void *mine, *kernel;
	const void *pinned; /* the block pinned as this thread's stack */
} altstack;

RTL_API int rtl_sys_sigaltstack(const stack_t *ss, stack_t *old) __asm__("sigaltstack");
int rtl_sys_sigaltstack(const stack_t *ss, stack_t *old)
{
	void *mine = ss ? ss->ss_sp : NULL;
	const void *pin = NULL;
	stack_t k;
	int r;

	if (ss && !(ss->ss_flags & SS_DISABLE) &&
	    rtl_access_in_views(ss->ss_sp, ss->ss_size)) {
		k = *ss;
		/* First the pin: an epoch under way finishes before the
		 * grant below, and none comes after it. */
		pin = ss->ss_sp;
		rtl_access_pin(pin, 1);
		k.ss_sp = rtl_access_resolve(ss->ss_sp, ss->ss_size, WR);
		if (!k.ss_sp)
			k.ss_sp = ss->ss_sp;
		ss = &k;
	}
	r = NEXT(sigaltstack)(ss, old);
	if (r == 0 && old && old->ss_sp && old->ss_sp == altstack.kernel)
		old->ss_sp = altstack.mine;
	if (r == 0 && ss) {
		altstack.mine = mine;
		altstack.kernel = ss->ss_sp;
		if (altstack.pinned)
			rtl_access_pin(altstack.pinned, -1);
		altstack.pinned = pin;
	} else if (pin) {
		rtl_access_pin(pin, -1); /* refused: nothing changed */
	}
	return r;
}
