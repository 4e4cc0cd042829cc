/* The record on a fatal signal: the handler writes the raw record itself
 * (track.c: async-signal-safe) and, for a report to stderr, waits a
 * bounded time for rtlctl to print it (analyse.c); then the signal takes
 * the process as it would have without rtl.
 *
 * A SIGBUS in rtl's memory is a program that ran off the end of the memory
 * rtl has handed out (views.h: no file there): it gets a line that says so
 * and dies of SIGSEGV, the signal such an access gets without rtl.
 *
 * The handlers go only on signals whose action is the default, and stay
 * invisible: sigaction and signal() report SIG_DFL for them (signals.c),
 * and a program that sets its own action replaces ours. */
#include "preload/track/fatal.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "core/region/views.h"
#include "core/util/fmt.h"
#include "preload/engine/engine.h"
#include "preload/place/alias.h"
#include "preload/shim/next.h"
#include "preload/track/track.h"

static const int sigs[] = { SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGSEGV,
	                    SIGTERM, SIGINT, SIGQUIT, SIGHUP };

static _Atomic uint64_t owned; /* bit per signal number */

void rtl_fatal_report(int sig)
{
	rtl_track_fatal(sig);
}

static int is_fault(int sig, const siginfo_t *si)
{
	return si->si_code > 0 && (sig == SIGSEGV || sig == SIGBUS ||
	                           sig == SIGFPE || sig == SIGILL);
}

static void say(const char *s)
{
	if (write(STDERR_FILENO, s, strlen(s)) < 0)
		return; /* nowhere to say it */
}

/* Whether a is in rtl's memory: the views, or the aliases and slots. */
static int in_rtl_memory(uintptr_t a)
{
	return rtl_view_of(a) >= 0 || rtl_alias_owns((const void *)a);
}

/* Signal-safe: write(2) and formatting into a stack buffer only. */
static int overrun(int sig, const siginfo_t *si)
{
	char a[RTL_FMT_MAX];

	if (sig != SIGBUS || si->si_code != BUS_ADRERR ||
	    !in_rtl_memory((uintptr_t)si->si_addr))
		return 0;
	say("rtl: access at ");
	say(rtl_fmt_hex((uintptr_t)si->si_addr, a));
	say(", past the end of the memory rtl has handed out: the program ran "
	    "off the end of its blocks (SIGSEGV, as without rtl)\n");
	return 1;
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	struct sigaction dfl;
	sigset_t set;

	int faulted = is_fault(sig, si);

	(void)uc;
	if (overrun(sig, si)) {
		sig = SIGSEGV; /* sent below: the access would fault as SIGBUS */
		faulted = 0;
	}
	if (rtl_engine.report[0])
		rtl_fatal_report(sig);
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	rtl_next()->sigaction(sig, &dfl, NULL);
	atomic_fetch_and(&owned, ~(1ull << sig));
	if (faulted)
		return; /* the instruction faults again and the process dies */
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}

int rtl_fatal_init(void)
{
	const struct rtl_next *n = rtl_next();

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa, old;

		if (n->sigaction(sigs[i], NULL, &old) < 0 ||
		    (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_fatal;
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
		sigemptyset(&sa.sa_mask);
		if (n->sigaction(sigs[i], &sa, NULL) == 0)
			atomic_fetch_or(&owned, 1ull << sigs[i]);
	}
	return 0;
}

int rtl_fatal_owns(int sig)
{
	return sig > 0 && sig < 64 && ((atomic_load(&owned) >> sig) & 1);
}

int rtl_fatal_is_handler(void (*handler)(int, siginfo_t *, void *))
{
	return handler == on_fatal;
}

void rtl_fatal_disown(int sig)
{
	if (sig > 0 && sig < 64)
		atomic_fetch_and(&owned, ~(1ull << sig));
}

void rtl_fatal_forked(void)
{
	rtl_track_forked(); /* the child's own record */
}
