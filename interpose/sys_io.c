/* Wrapped calls that move data between a file and user buffers: read,
 * write and their vector, positional, socket and message forms, getdents64,
 * getrandom. Each is exported under the libc name (an asm label keeps C
 * prototypes apart); outside the views each costs one range check. */
#include <unistd.h>
#include <sys/random.h>

#include "interpose/syscalls.h"

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
enum vec_call {
	V_READV,
	V_PREADV,
	V_PREADV2,
	V_WRITEV,
	V_PWRITEV,
	V_PWRITEV2,
};

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
