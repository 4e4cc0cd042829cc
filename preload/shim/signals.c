/* sigaction and the signal() family, interposed so that a program that sets
 * its own SIGSEGV action is chained behind rtl's handler instead of
 * replacing it: rtl keeps the kernel's action and passes the faults that are
 * not its own to the program's. The preload's fatal-signal handlers (the
 * report on a fatal signal) read as SIG_DFL and give way to the program's.
 * Every other signal, and SIGSEGV before the constructor has handed rtl the
 * real sigaction, go straight to the kernel.
 * SIGBUS is chained as SIGSEGV is where rtl takes it (protection in the
 * page tables: a write to a protected page is a SIGBUS, core/prot/prot.h);
 * elsewhere it passes through, and the program's handler is the only one. */
#include "preload/shim/signals.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "core/trap/hooks.h"
#include "interpose/sigsys.h"
#include "preload/shim/next.h"
#include "preload/shim/relay.h"
#include "preload/shim/sigmask.h"
#include "preload/track/fatal.h"

#define API __attribute__((visibility("default")))

static _Atomic int chained; /* rtl has the real sigaction */

void rtl_signals_ready(void)
{
	const struct rtl_next *n = rtl_next();

	rtl_hook_sigaction(n->sigaction);
	atomic_store(&chained, 1);
}

/* Whether the program's action for sig is kept behind rtl's handler:
 * SIGSEGV once rtl has the real sigaction, SIGBUS where rtl takes it. */
static int rtl_chained(int sig)
{
	return (sig == SIGSEGV && atomic_load(&chained)) ||
	       (sig == SIGBUS && rtl_traps_signal(SIGBUS));
}

/* The preload's fatal-signal handler (fatal.c) is not the program's to
 * see: it reads as the default action. */
static void hide(struct sigaction *old)
{
	if (!rtl_fatal_is_handler(old->sa_sigaction))
		return;
	memset(old, 0, sizeof(*old));
	old->sa_handler = SIG_DFL;
	sigemptyset(&old->sa_mask);
}

API int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	const struct rtl_next *n;
	struct sigaction prev;
	int r;

	if (rtl_chained(sig)) {
		r = rtl_sigaction(sig, act, old ? &prev : NULL);
	} else if (sig == SIGSYS && rtl_sigsys_on()) {
		/* rtl's handler stays: the program's runs for SIGSYS that are
		 * not rtl's (its own seccomp filters, a sent SIGSYS). */
		r = rtl_sigsys_sigaction(act, old ? &prev : NULL);
	} else if (rtl_sigmask_on()) {
		/* A handler's mask must not block SIGSEGV (sigmask.c). */
		r = rtl_relay_sigaction(sig, act, old ? &prev : NULL);
	} else {
		n = rtl_next();
		if (!n) {
			errno = EAGAIN; /* only while dlsym runs for the preload */
			return -1;
		}
		if (!rtl_fatal_owns(sig))
			return n->sigaction(sig, act, old);
		r = n->sigaction(sig, act, old ? &prev : NULL);
	}
	if (r == 0 && old) {
		hide(&prev);
		*old = prev;
	}
	if (r == 0 && act)
		rtl_fatal_disown(sig);
	return r;
}

API int __sigaction(int, const struct sigaction *, struct sigaction *)
        RTL_ALIAS_OF(sigaction);

/* The next definition of name (a signal() variant), looked up on first use. */
static sighandler_t next_variant(_Atomic(void *) *cache, const char *name,
                                 int sig, sighandler_t h)
{
	void *sym = atomic_load(cache);
	sighandler_t (*f)(int, sighandler_t);

	if (!sym) {
		sym = dlsym(RTLD_NEXT, name);
		if (!sym) {
			errno = ENOSYS;
			return SIG_ERR;
		}
		atomic_store(cache, sym);
	}
	*(void **)&f = sym; /* POSIX's way from dlsym to a function */
	return f(sig, h);
}

/* For SIGSEGV under rtl: glibc's signal() is BSD's (the handler stays,
 * system calls restart, the signal is blocked while its handler runs),
 * sysv_signal is one-shot. */
static sighandler_t set_handler(int sig, sighandler_t h, int flags,
                                int block_self)
{
	struct sigaction sa, old;

	if (h == SIG_ERR) {
		errno = EINVAL;
		return SIG_ERR;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (block_self)
		sigaddset(&sa.sa_mask, sig);
	if (sigaction(sig, &sa, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

API sighandler_t signal(int sig, sighandler_t h)
{
	static _Atomic(void *) next_signal;

	if (rtl_chained(sig) || (sig == SIGSYS && rtl_sigsys_on()) ||
	    rtl_fatal_owns(sig) || rtl_sigmask_on())
		return set_handler(sig, h, SA_RESTART, 1);
	return next_variant(&next_signal, "signal", sig, h);
}

API sighandler_t bsd_signal(int sig, sighandler_t h)
        RTL_ALIAS_OF(signal);

API sighandler_t sysv_signal(int sig, sighandler_t h)
{
	static _Atomic(void *) next_sysv;

	if (rtl_chained(sig) || (sig == SIGSYS && rtl_sigsys_on()) ||
	    rtl_fatal_owns(sig) || rtl_sigmask_on())
		return set_handler(sig, h, SA_RESETHAND | SA_NODEFER, 0);
	return next_variant(&next_sysv, "sysv_signal", sig, h);
}

API sighandler_t __sysv_signal(int sig, sighandler_t h)
        RTL_ALIAS_OF(sysv_signal);
