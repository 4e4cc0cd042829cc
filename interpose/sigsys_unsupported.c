/* The seccomp mechanism (sigsys.c) where it has not been ported: its
 * trampoline, its register frame and its system-call table are x86-64's.
 * Here rtl_sigsys_install fails with ENOSYS and the preload runs with its
 * wrappers alone, as when the kernel refuses seccomp (docs/aarch64.md). */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "interpose/sigsys.h"

int rtl_sigsys_install(rtl_sigaction_fn sigaction)
{
	(void)sigaction;
	errno = ENOSYS;
	return -1;
}

int rtl_sigsys_on(void)
{
	return 0;
}

int rtl_sigsys_sigaction(const struct sigaction *act, struct sigaction *old)
{
	(void)act, (void)old;
	errno = EINVAL;
	return -1;
}

long rtl_sigsys_call(long nr, long a0, long a1, long a2, long a3, long a4,
                     long a5)
{
	long r = syscall(nr, a0, a1, a2, a3, a4, a5);

	return r < 0 ? -errno : r;
}

void rtl_sigsys_stats(struct rtl_sigsys_stats *out)
{
	memset(out, 0, sizeof(*out));
}
