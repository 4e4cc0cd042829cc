/* The program's signal handlers, relayed (relay.h). The kernel's action for
 * a signal the program handles is `relay`, with the program's mask less
 * SIGSEGV (and SIGBUS where rtl takes it: a handler whose sa_mask is full
 * must still take region traps);
 * the program's own action is kept here and read back by sigaction. The
 * relay tells sigmask.c when the handler begins and ends, so the program
 * sees SIGSEGV blocked inside a handler whose mask blocks it, and the bit
 * comes back at its end with the mask the frame restores.
 *
 * The program's SIGSEGV handler (and SIGBUS handler where rtl takes SIGBUS)
 * is run by the trap path (core/trap/foreign.c) through run_segv_handler,
 * the same way: blocked while it runs unless SA_NODEFER, as the kernel
 * would block it.
 *
 * relay runs in signal handlers; sigaction here takes a spin lock only with
 * every signal blocked, so a handler never finds it held by its own thread. */
#include "preload/shim/relay.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "core/trap/hooks.h"
#include "interpose/sigsys.h"
#include "preload/shim/next.h"
#include "preload/shim/sigmask.h"
#include "preload/track/fatal.h"

#define NSIGNALS 65

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000 /* glibc sets it; its headers do not name it */
#endif

/* What the program set for one signal. Two slots: the relay reads the
 * current one whole while sigaction fills the other. */
struct action {
	union {
		void (*info)(int, siginfo_t *, void *); /* SA_SIGINFO */
		void (*plain)(int);
	} fn;      /* a handler: NULL for SIG_DFL and SIG_IGN */
	int flags; /* the program's sa_flags */
	int hide;  /* the kept-out signals its sa_mask blocks (sigmask.h) */
	int set;   /* set through here */
};

static struct action actions[NSIGNALS][2];
static _Atomic int cur[NSIGNALS];
static atomic_flag busy = ATOMIC_FLAG_INIT;

static void relay(int sig, siginfo_t *si, void *uc)
{
	struct action a;
	int token;

	if (sig <= 0 || sig >= NSIGNALS)
		return;
	a = actions[sig][atomic_load_explicit(&cur[sig], memory_order_acquire)];
	if (!a.fn.plain)
		return; /* changed to SIG_DFL or SIG_IGN while it came */
	token = rtl_sigmask_enter(uc, (uintptr_t)__builtin_frame_address(0), a.hide);
	if (a.flags & SA_SIGINFO)
		a.fn.info(sig, si, uc);
	else
		a.fn.plain(sig);
	rtl_sigmask_leave(uc, token);
}

/* old as the program set it: its handler, its SA_SIGINFO, its mask. */
static void read_back(struct sigaction *old, const struct action *a)
{
	const int ours = SA_SIGINFO | SA_RESTORER;

	if (!a->set)
		return;
	if (old->sa_sigaction == relay)
		old->sa_sigaction = a->fn.info;
	else if ((old->sa_flags & ~ours) != (a->flags & ~ours))
		return; /* set by someone else since (a raw system call) */
	old->sa_flags = (old->sa_flags & ~SA_SIGINFO) | (a->flags & SA_SIGINFO);
	rtl_sigmask_add(&old->sa_mask, a->hide);
}

static int set_action(int sig, const struct sigaction *act, struct sigaction *old)
{
	const struct rtl_next *n = rtl_next();
	struct sigaction k, kold;
	struct action a, prev;
	sigset_t all, mask;
	int r, e;

	if (sig <= 0 || sig >= NSIGNALS || sig == SIGSEGV || rtl_traps_signal(sig))
		return n->sigaction(sig, act, old);
	memset(&a, 0, sizeof(a));
	if (act) {
		k = *act;
		a.hide = rtl_sigmask_bits(&k.sa_mask);
		a.flags = k.sa_flags;
		a.set = 1;
		rtl_sigmask_del(&k.sa_mask);
		if (k.sa_handler != SIG_DFL && k.sa_handler != SIG_IGN) {
			a.fn.info = k.sa_sigaction; /* the union: either member */
			k.sa_sigaction = relay;
			k.sa_flags |= SA_SIGINFO;
		}
	}
	sigfillset(&all);
	rtl_sigmask_del(&all);
	n->pthread_sigmask(SIG_BLOCK, &all, &mask);
	while (atomic_flag_test_and_set_explicit(&busy, memory_order_acquire))
		;
	prev = actions[sig][atomic_load(&cur[sig])];
	if (act) /* the relay may run as soon as the kernel has it */
		actions[sig][!atomic_load(&cur[sig])] = a;
	r = n->sigaction(sig, act ? &k : NULL, &kold);
	e = errno;
	if (r == 0 && act)
		atomic_store_explicit(&cur[sig], !atomic_load(&cur[sig]), memory_order_release);
	atomic_flag_clear_explicit(&busy, memory_order_release);
	n->pthread_sigmask(SIG_SETMASK, &mask, NULL);
	if (r < 0) {
		errno = e;
		return r;
	}
	if (old) {
		read_back(&kold, &prev);
		*old = kold;
	}
	return 0;
}

int rtl_relay_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return set_action(sig, act, old);
}

/* The trap path's way to run the program's SIGSEGV (or SIGBUS) handler
 * (hooks.h). */
static void run_segv_handler(const struct sigaction *act, int sig, siginfo_t *si,
                             void *uc)
{
	const struct rtl_next *n = rtl_next();
	int self = !(act->sa_flags & SA_NODEFER) || sigismember(&act->sa_mask, sig) == 1;
	int hide = (rtl_sigmask_bits(&act->sa_mask) & ~rtl_sigmask_bit(sig)) |
	           (self ? rtl_sigmask_bit(sig) : 0);
	sigset_t mask = act->sa_mask, old;
	int token;

	rtl_sigmask_del(&mask);
	n->pthread_sigmask(SIG_BLOCK, &mask, &old);
	token = rtl_sigmask_enter(uc, (uintptr_t)__builtin_frame_address(0), hide);
	if (act->sa_flags & SA_SIGINFO)
		act->sa_sigaction(sig, si, uc);
	else
		act->sa_handler(sig);
	rtl_sigmask_leave(uc, token);
	n->pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* A fork while another thread held the flag: that thread is not in the
 * child. */
static void relay_child(void)
{
	atomic_flag_clear(&busy);
}

void rtl_relay_start(void)
{
	const struct rtl_next *n = rtl_next();

	pthread_atfork(NULL, NULL, relay_child);
	/* Handlers set before rtl ran (other libraries' constructors): from
	 * now on through the relay too. */
	for (int sig = 1; sig < NSIGNALS; sig++) {
		struct sigaction sa;

		if (sig == SIGSEGV || sig == SIGKILL || sig == SIGSTOP ||
		    (sig == SIGSYS && rtl_sigsys_on()) || rtl_traps_signal(sig) || /* rtl's own */
		    n->sigaction(sig, NULL, &sa) < 0)
			continue;
		if (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN ||
		    rtl_fatal_is_handler(sa.sa_sigaction))
			continue;
		sa.sa_flags &= ~SA_RESTORER;
		set_action(sig, &sa, NULL);
	}
	rtl_hook_run_handler(run_segv_handler);
}
