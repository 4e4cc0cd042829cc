/* The hooks of hooks.h: one atomic pointer each, read in the SIGSEGV
 * handler with a plain load. */
#include "core/trap/hooks.h"

#include <stdatomic.h>

#include "core/trap/foreign.h"

static _Atomic(rtl_sigaction_fn) real_sigaction = sigaction;
_Atomic(rtl_fault_filter_fn) rtl_hooks_filter_fn;
static _Atomic(rtl_foreign_hook_fn) foreign;
static _Atomic(rtl_death_hook_fn) death;
static _Atomic(rtl_blocked_hook_fn) blocked;
static _Atomic(rtl_run_handler_fn) run_handler;

void rtl_hook_sigaction(rtl_sigaction_fn fn)
{
	atomic_store(&real_sigaction, fn ? fn : sigaction);
}

int rtl_hooks_real_sigaction(int sig, const struct sigaction *act,
                             struct sigaction *old)
{
	return atomic_load(&real_sigaction)(sig, act, old);
}

int rtl_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (sig == SIGSEGV || rtl_foreign_installed(sig))
		return rtl_foreign_sigaction(sig, act, old);
	return rtl_hooks_real_sigaction(sig, act, old);
}

int rtl_traps_signal(int sig)
{
	return rtl_foreign_installed(sig);
}

void rtl_hook_fault_filter(rtl_fault_filter_fn fn)
{
	atomic_store(&rtl_hooks_filter_fn, fn);
}

void rtl_hook_foreign(rtl_foreign_hook_fn fn)
{
	atomic_store(&foreign, fn);
}

int rtl_hooks_foreign(uintptr_t addr, int write, int sig, void *uc)
{
	rtl_foreign_hook_fn f = atomic_load_explicit(&foreign, memory_order_acquire);

	return f && f((void *)addr, write, sig, uc);
}

void rtl_hook_death(rtl_death_hook_fn fn)
{
	atomic_store(&death, fn);
}

void rtl_hooks_death(int sig)
{
	rtl_death_hook_fn f = atomic_load(&death);

	if (f)
		f(sig);
}

void rtl_hook_blocked(rtl_blocked_hook_fn fn)
{
	atomic_store(&blocked, fn);
}

int rtl_hooks_blocked(const siginfo_t *si, void *uc)
{
	rtl_blocked_hook_fn f = atomic_load_explicit(&blocked, memory_order_acquire);

	return f && f(si, uc);
}

void rtl_hook_run_handler(rtl_run_handler_fn fn)
{
	atomic_store(&run_handler, fn);
}

int rtl_hooks_run_handler(const struct sigaction *act, int sig, siginfo_t *si,
                          void *uc)
{
	rtl_run_handler_fn f = atomic_load_explicit(&run_handler, memory_order_acquire);

	if (!f)
		return 0;
	f(act, sig, si, uc);
	return 1;
}
