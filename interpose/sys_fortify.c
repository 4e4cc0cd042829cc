/* The _FORTIFY_SOURCE forms of the wrapped calls. A program built with
 * -D_FORTIFY_SOURCE (Debian builds all its packages so) calls __read_chk
 * and friends wherever the compiler knows the buffer's size; glibc's
 * versions check that size and make the system call from inside libc,
 * where no wrapper sees it. These make the same check, fail the same way
 * (__chk_fail: "buffer overflow detected", SIGABRT), then go through rtl's
 * wrapper of the plain call. */
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "interpose/syscalls.h"

extern void __chk_fail(void) __attribute__((noreturn));

RTL_API ssize_t rtl_sys_read_chk(int fd, void *buf, size_t n, size_t buflen) __asm__("__read_chk");
ssize_t rtl_sys_read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	if (n > buflen)
		__chk_fail();
	return read(fd, buf, n);
}

RTL_API ssize_t rtl_sys_pread_chk(int fd, void *buf, size_t n, off_t off,
                                  size_t buflen) __asm__("__pread_chk");
ssize_t rtl_sys_pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
	if (n > buflen)
		__chk_fail();
	return pread(fd, buf, n, off);
}

RTL_API ssize_t rtl_sys_pread64_chk(int fd, void *buf, size_t n, off_t off,
                                    size_t buflen) __asm__("__pread64_chk");
ssize_t rtl_sys_pread64_chk(int fd, void *buf, size_t n, off_t off,
                            size_t buflen)
{
	if (n > buflen)
		__chk_fail();
	return pread(fd, buf, n, off);
}

RTL_API ssize_t rtl_sys_recv_chk(int fd, void *buf, size_t n, size_t buflen,
                                 int flags) __asm__("__recv_chk");
ssize_t rtl_sys_recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
	if (n > buflen)
		__chk_fail();
	return recv(fd, buf, n, flags);
}

RTL_API ssize_t rtl_sys_recvfrom_chk(int fd, void *buf, size_t n, size_t buflen,
                                     int flags, struct sockaddr *from,
                                     socklen_t *fromlen) __asm__("__recvfrom_chk");
ssize_t rtl_sys_recvfrom_chk(int fd, void *buf, size_t n, size_t buflen,
                             int flags, struct sockaddr *from, socklen_t *fromlen)
{
	if (n > buflen)
		__chk_fail();
	return recvfrom(fd, buf, n, flags, from, fromlen);
}

/* glibc's test: size * n must neither overflow nor pass buflen. */
static void fread_check(size_t buflen, size_t size, size_t n)
{
	size_t bytes;

	if (__builtin_mul_overflow(size, n, &bytes) || bytes > buflen)
		__chk_fail();
}

RTL_API size_t rtl_sys_fread_chk(void *buf, size_t buflen, size_t size, size_t n,
                                 FILE *f) __asm__("__fread_chk");
size_t rtl_sys_fread_chk(void *buf, size_t buflen, size_t size, size_t n, FILE *f)
{
	fread_check(buflen, size, n);
	return fread(buf, size, n, f);
}

RTL_API size_t rtl_sys_fread_unlocked_chk(void *buf, size_t buflen, size_t size,
                                          size_t n, FILE *f) __asm__("__fread_unlocked_chk");
size_t rtl_sys_fread_unlocked_chk(void *buf, size_t buflen, size_t size,
                                  size_t n, FILE *f)
{
	fread_check(buflen, size, n);
	return fread_unlocked(buf, size, n, f);
}

RTL_API char *rtl_sys_getcwd_chk(char *buf, size_t size, size_t buflen) __asm__("__getcwd_chk");
char *rtl_sys_getcwd_chk(char *buf, size_t size, size_t buflen)
{
	if (size > buflen)
		__chk_fail();
	return getcwd(buf, size);
}

RTL_API ssize_t rtl_sys_readlink_chk(const char *path, char *buf, size_t n,
                                     size_t buflen) __asm__("__readlink_chk");
ssize_t rtl_sys_readlink_chk(const char *path, char *buf, size_t n, size_t buflen)
{
	if (n > buflen)
		__chk_fail();
	return readlink(path, buf, n);
}

RTL_API ssize_t rtl_sys_readlinkat_chk(int dfd, const char *path, char *buf,
                                       size_t n, size_t buflen) __asm__("__readlinkat_chk");
ssize_t rtl_sys_readlinkat_chk(int dfd, const char *path, char *buf, size_t n,
                               size_t buflen)
{
	if (n > buflen)
		__chk_fail();
	return readlinkat(dfd, path, buf, n);
}

RTL_API int rtl_sys_poll_chk(struct pollfd *fds, nfds_t nfds, int timeout,
                             size_t fdslen) __asm__("__poll_chk");
int rtl_sys_poll_chk(struct pollfd *fds, nfds_t nfds, int timeout, size_t fdslen)
{
	if (fdslen / sizeof(*fds) < nfds)
		__chk_fail();
	return poll(fds, nfds, timeout);
}

RTL_API int rtl_sys_ppoll_chk(struct pollfd *fds, nfds_t nfds,
                              const struct timespec *timeout,
                              const sigset_t *mask, size_t fdslen) __asm__("__ppoll_chk");
int rtl_sys_ppoll_chk(struct pollfd *fds, nfds_t nfds,
                      const struct timespec *timeout, const sigset_t *mask,
                      size_t fdslen)
{
	if (fdslen / sizeof(*fds) < nfds)
		__chk_fail();
	return ppoll(fds, nfds, timeout, mask);
}
