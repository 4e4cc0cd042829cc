/* The next definitions of the calls rtl wraps (docs/syscalls.md), found
 * with dlsym(RTLD_NEXT) at load, or at the first wrapped call made before
 * librtl's constructor ran (another library's constructor, a sanitizer).
 * When librtl comes after libc in the lookup order (it is a dependency of a
 * preloaded library: the loader puts the program's own dependencies first),
 * nothing follows it: libc's definitions are taken from libc itself. */
#include <dlfcn.h>

#include "interpose/syscalls.h"

struct rtl_sys_next rtl_sys_next;

/* Asked once, of a name libc surely has: whether anything follows
 * librtl-interpose. A lookup that fails formats an error message, and
 * failing once for each of the fifty names was a fourth of the
 * instructions of a process's start under the preload (callgrind on
 * /bin/true). */
static void *next(const char *name)
{
	static void *libc;
	static int nothing_follows = -1;
	void *f;

	if (nothing_follows < 0)
		nothing_follows = dlsym(RTLD_NEXT, "write") == NULL;
	if (!nothing_follows && (f = dlsym(RTLD_NEXT, name)))
		return f;
	if (!libc)
		libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	return libc ? dlsym(libc, name) : NULL;
}

__attribute__((constructor)) void rtl_sys_resolve(void)
{
	if (rtl_sys_next.read)
		return;
#define RESOLVE(name) (*(void **)&rtl_sys_next.name = next(#name))
	RESOLVE(pread);
	RESOLVE(readv);
	RESOLVE(preadv);
	RESOLVE(preadv2);
	RESOLVE(write);
	RESOLVE(pwrite);
	RESOLVE(writev);
	RESOLVE(pwritev);
	RESOLVE(pwritev2);
	RESOLVE(recv);
	RESOLVE(recvfrom);
	RESOLVE(recvmsg);
	RESOLVE(send);
	RESOLVE(sendto);
	RESOLVE(sendmsg);
	RESOLVE(getdents64);
	RESOLVE(fstat);
	RESOLVE(stat);
	RESOLVE(lstat);
	RESOLVE(fstatat);
	RESOLVE(statx);
	RESOLVE(getrandom);
	RESOLVE(sigaltstack);
	RESOLVE(clock_gettime);
	RESOLVE(gettimeofday);
	RESOLVE(pipe);
	RESOLVE(pipe2);
	RESOLVE(socketpair);
	RESOLVE(poll);
	RESOLVE(ppoll);
	RESOLVE(select);
	RESOLVE(pselect);
	RESOLVE(epoll_wait);
	RESOLVE(epoll_pwait);
	RESOLVE(fread);
	RESOLVE(fread_unlocked);
	RESOLVE(fwrite);
	RESOLVE(fwrite_unlocked);
	RESOLVE(getcwd);
	RESOLVE(readlink);
	RESOLVE(readlinkat);
	RESOLVE(read); /* last: marks the table complete */
#undef RESOLVE
}
