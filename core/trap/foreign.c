/* Faults that are not rtl's go where they would have gone without rtl: the
 * action the signal had before rtl, or the one the program set since
 * through rtl_sigaction while rtl's handler stayed installed. Two signals:
 * SIGSEGV always, SIGBUS where protection lives in the page tables
 * (core/prot/prot.c: a write to a protected page is a SIGBUS).
 *
 * pass_on runs in rtl's handlers: no malloc, no lock the interrupted code
 * may hold (the writers' flag is only ever tried there). */
#include "core/trap/foreign.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "core/start/stats.h"
#include "core/trap/hooks.h"
#include "core/util/lock.h"

/* Per signal, two slots: a writer fills the one not current and flips, so
 * the handler always copies a whole action. Writers hold busy. */
enum { SEGV,
       BUS,
       NSIGS };
static struct sigaction actions[NSIGS][2];
static _Atomic int cur[NSIGS];
static struct rtl_lock busy = RTL_LOCK_INIT;
static _Atomic int installed[NSIGS]; /* rtl's handler is the kernel's action */

static int index_of(int sig)
{
	return sig == SIGBUS ? BUS : SEGV;
}

void rtl_foreign_fork_prepare(void)
{
	rtl_lock_acquire(&busy);
}

void rtl_foreign_fork_done(void)
{
	rtl_lock_release(&busy);
}

/* Make act the current foreign action of signal i; busy held. */
static void store(int i, const struct sigaction *act)
{
	int next = !atomic_load_explicit(&cur[i], memory_order_relaxed);

	actions[i][next] = *act;
	atomic_store_explicit(&cur[i], next, memory_order_release);
}

int rtl_foreign_install(int sig, const struct sigaction *sa)
{
	int i = index_of(sig), ok;

	rtl_lock_acquire(&busy);
	ok = rtl_hooks_real_sigaction(sig, sa, &actions[i][atomic_load(&cur[i])]) == 0;
	if (ok)
		atomic_store(&installed[i], 1);
	rtl_lock_release(&busy);
	return ok ? 0 : -1;
}

int rtl_foreign_installed(int sig)
{
	return (sig == SIGSEGV || sig == SIGBUS) &&
	       atomic_load_explicit(&installed[index_of(sig)], memory_order_acquire);
}

int rtl_foreign_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction in, out;
	int i = index_of(sig), r = 0;

	if (act)
		in = *act; /* user pointers are touched outside the lock */
	rtl_lock_acquire(&busy);
	if (!atomic_load(&installed[i])) {
		r = rtl_hooks_real_sigaction(sig, act ? &in : NULL, &out);
	} else {
		out = actions[i][atomic_load(&cur[i])];
		if (act)
			store(i, &in);
	}
	rtl_lock_release(&busy);
	if (r == 0 && old)
		*old = out;
	return r;
}

void rtl_foreign_pass_on(int sig, siginfo_t *si, void *uc)
{
	int i = index_of(sig);
	struct sigaction prev =
	        actions[i][atomic_load_explicit(&cur[i], memory_order_acquire)];
	sigset_t mask, old;

	if (rtl_hooks_blocked(si, uc)) {
		/* The program blocks the signal here. A sent one waits in the hook
		 * until it is unblocked; a fault gets what the kernel gives a
		 * blocked synchronous signal: the default action, whatever the
		 * handler (the report is written first, as for rtl's deaths). */
		if (si->si_code > 0) {
			struct sigaction dfl;

			rtl_hooks_death(sig);
			memset(&dfl, 0, sizeof(dfl));
			dfl.sa_handler = SIG_DFL;
			rtl_hooks_real_sigaction(sig, &dfl, NULL);
		}
		return;
	}
	RTL_COUNT(foreign);
	if (prev.sa_handler == SIG_IGN && si->si_code <= 0)
		return; /* a sent signal the program ignores */
	if (prev.sa_handler == SIG_DFL || prev.sa_handler == SIG_IGN) {
		/* Die the death the program would have died: a fault comes back
		 * when the instruction re-executes (the kernel forces it even
		 * when ignored), a sent signal is resent. */
		prev.sa_handler = SIG_DFL;
		rtl_hooks_real_sigaction(sig, &prev, NULL);
		if (si->si_code <= 0)
			raise(sig);
		return;
	}
	/* What the kernel would have done for the program's own handler: a
	 * one-shot handler reverts, its mask is blocked while it runs. The
	 * signal itself stays unblocked: rtl needs it for the region traps
	 * the program's handler may take. */
	if ((prev.sa_flags & SA_RESETHAND) &&
	    rtl_lock_try(&busy) == 0) {
		struct sigaction dfl;
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		store(i, &dfl);
		rtl_lock_release(&busy);
	}
	if (rtl_hooks_run_handler(&prev, sig, si, uc))
		return; /* the preload's way: the program's view of its mask kept */
	mask = prev.sa_mask;
	sigdelset(&mask, sig);
	pthread_sigmask(SIG_BLOCK, &mask, &old);
	if (prev.sa_flags & SA_SIGINFO)
		prev.sa_sigaction(sig, si, uc);
	else
		prev.sa_handler(sig);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}
