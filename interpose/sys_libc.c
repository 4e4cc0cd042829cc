/* libc calls that hand the caller's buffer to the kernel from inside libc,
 * where no wrapper of the system call can see it: fread and fwrite (a
 * transfer of a buffer's size or more goes straight between the file and
 * the caller's memory), getcwd, readlink, readlinkat. The buffer is
 * resolved before the call, as for the system calls: fread, getcwd and
 * readlink write it, fwrite reads it. */
#include <stdio.h>
#include <unistd.h>

#include "interpose/syscalls.h"

/* The bytes of count items of size bytes, or 0 on overflow (then the
 * buffer is left as it is and libc decides). */
static size_t bytes(size_t size, size_t count)
{
	size_t n;
	return __builtin_mul_overflow(size, count, &n) ? 0 : n;
}

RTL_API size_t rtl_sys_fread(void *buf, size_t size, size_t n, FILE *f) __asm__("fread");
size_t rtl_sys_fread(void *buf, size_t size, size_t n, FILE *f)
{
	void *k = BUF(buf, bytes(size, n), WR);
	return refused(buf, k) ? 0 : NEXT(fread)(k, size, n, f);
}

RTL_API size_t rtl_sys_fread_unlocked(void *buf, size_t size, size_t n, FILE *f) __asm__("fread_unlocked");
size_t rtl_sys_fread_unlocked(void *buf, size_t size, size_t n, FILE *f)
{
	void *k = BUF(buf, bytes(size, n), WR);
	return refused(buf, k) ? 0 : NEXT(fread_unlocked)(k, size, n, f);
}

RTL_API size_t rtl_sys_fwrite(const void *buf, size_t size, size_t n, FILE *f) __asm__("fwrite");
size_t rtl_sys_fwrite(const void *buf, size_t size, size_t n, FILE *f)
{
	const void *k = BUF(buf, bytes(size, n), RD);
	return refused(buf, k) ? 0 : NEXT(fwrite)(k, size, n, f);
}

RTL_API size_t rtl_sys_fwrite_unlocked(const void *buf, size_t size, size_t n,
                                       FILE *f) __asm__("fwrite_unlocked");
size_t rtl_sys_fwrite_unlocked(const void *buf, size_t size, size_t n, FILE *f)
{
	const void *k = BUF(buf, bytes(size, n), RD);
	return refused(buf, k) ? 0 : NEXT(fwrite_unlocked)(k, size, n, f);
}

/* getcwd(NULL, ...) allocates inside libc: nothing to resolve. The result
 * is the caller's own pointer, whichever view the kernel was given. */
RTL_API char *rtl_sys_getcwd(char *buf, size_t size) __asm__("getcwd");
char *rtl_sys_getcwd(char *buf, size_t size)
{
	char *k;

	if (!buf)
		return NEXT(getcwd)(NULL, size);
	k = BUF(buf, size, WR);
	if (refused(buf, k))
		return NULL;
	return NEXT(getcwd)(k, size) ? buf : NULL;
}

RTL_API ssize_t rtl_sys_readlink(const char *path, char *buf, size_t n) __asm__("readlink");
ssize_t rtl_sys_readlink(const char *path, char *buf, size_t n)
{
	char *k = BUF(buf, n, WR);
	const char *kp = path_arg(path);
	return refused(buf, k) || refused(path, kp) ? -1 : NEXT(readlink)(kp, k, n);
}

RTL_API ssize_t rtl_sys_readlinkat(int dfd, const char *path, char *buf, size_t n) __asm__("readlinkat");
ssize_t rtl_sys_readlinkat(int dfd, const char *path, char *buf, size_t n)
{
	char *k = BUF(buf, n, WR);
	const char *kp = path_arg(path);
	return refused(buf, k) || refused(path, kp) ? -1
	                                            : NEXT(readlinkat)(dfd, kp, k, n);
}
