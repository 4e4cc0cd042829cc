/* Every system call on rtl's memory (sigsys.c, docs/syscalls.md "Every
 * call"): a seccomp filter traps the calls that hand the kernel a pointer
 * into rtl's memory, and rtl makes them itself once their buffers are
 * resolved. Exported from librtl-interpose for the preload (not a stable
 * interface). */
#ifndef RTL_SIGSYS_H
#define RTL_SIGSYS_H

#include <signal.h>
#include <stdint.h>

#include "core/util/export.h"

typedef int (*rtl_sigaction_fn)(int sig, const struct sigaction *act,
                                struct sigaction *old);

/* Install the filter and the SIGSYS handler over rtl's memory as it is now
 * (the views, and the range rtl_access_set_range gave). sigaction: the
 * real one (the program's own SIGSYS action is kept behind rtl's). Once
 * per process; inherited by threads and forked children, and by exec'd
 * programs (docs/syscalls.md says what that means). 0, or -1 with errno
 * (seccomp refused: EACCES without no_new_privs, EINVAL on old kernels). */
RTL_PRIVATE_API int rtl_sigsys_install(rtl_sigaction_fn sigaction);

/* Whether the filter is installed. */
RTL_PRIVATE_API int rtl_sigsys_on(void);

/* sigaction(SIGSYS, ...) as the program should see it once rtl's handler
 * is installed: act becomes the action rtl passes others' SIGSYS to; old
 * is what the program set before. */
RTL_PRIVATE_API int rtl_sigsys_sigaction(const struct sigaction *act,
                                         struct sigaction *old);

/* The raw system call nr, made from the trampoline (the filter lets it
 * through): the kernel's return value, -errno on failure. Signal-safe. */
RTL_PRIVATE_API long rtl_sigsys_call(long nr, long a0, long a1, long a2,
                                     long a3, long a4, long a5);

/* Calls the handler made for the program, by outcome. */
struct rtl_sigsys_stats {
	uint64_t calls;   /* trapped and made */
	uint64_t buffers; /* buffers resolved for them */
	uint64_t refused; /* answered EFAULT: a buffer rtl could not grant */
};
RTL_PRIVATE_API void rtl_sigsys_stats(struct rtl_sigsys_stats *out);

#endif
