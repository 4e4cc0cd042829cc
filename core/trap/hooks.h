/* What a part of rtl outside the core (the preload) hooks into the trap
 * path, and what the trap path asks of those hooks. The setters are
 * exported (RTL_PRIVATE); each hook may be called in the SIGSEGV handler,
 * so it must be async-signal-safe: no malloc, no locks the interrupted code
 * may hold. Nothing here knows of preloading. */
#ifndef RTL_HOOKS_H
#define RTL_HOOKS_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/util/export.h"

/* ---- for the preload ---- */

/* The function rtl changes signal actions with (NULL: libc's sigaction).
 * An interposer of sigaction hands in the real one, so that rtl's own
 * changes reach the kernel. */
typedef int (*rtl_sigaction_fn)(int sig, const struct sigaction *act,
                                struct sigaction *old);
RTL_PRIVATE_API void rtl_hook_sigaction(rtl_sigaction_fn fn);

/* sigaction as the program should see it. For SIGSEGV, and for SIGBUS
 * where rtl takes it (rtl_traps_signal), once rtl's handler is installed,
 * act becomes the action rtl passes foreign faults to (what would have run
 * without rtl) and old what was there; before, and for other signals, the
 * real sigaction. 0, or -1 with errno. */
RTL_PRIVATE_API int rtl_sigaction(int sig, const struct sigaction *act,
                                  struct sigaction *old);

/* Whether rtl's trap handler is the kernel's action for sig: SIGSEGV once
 * rtl has started; SIGBUS once protection lives in the page tables
 * (core/prot/prot.h: a write to a protected page is a SIGBUS). A signal
 * rtl takes must never be blocked in the kernel's mask. */
RTL_PRIVATE_API int rtl_traps_signal(int sig);

/* Called for a fault in the views that the view's own mapping would refuse
 * (a write through the RO view, any access through the NONE view); non-zero
 * gives the fault to the program's action instead of treating it as a
 * region trap (a range the program mprotect'ed itself). NULL: none. */
typedef int (*rtl_fault_filter_fn)(void *addr, int write);
RTL_PRIVATE_API void rtl_hook_fault_filter(rtl_fault_filter_fn fn);

/* Called for a fault outside the views (a real fault, not a sent signal),
 * before the program's own action; non-zero if it handled the fault and
 * the instruction may run again. sig: SIGSEGV, or SIGBUS for a write to a
 * page the protection backend protected in the page tables (or, there, an
 * access past the end of the file behind it). uc is the interrupted
 * context. */
typedef int (*rtl_foreign_hook_fn)(void *addr, int write, int sig, void *uc);
RTL_PRIVATE_API void rtl_hook_foreign(rtl_foreign_hook_fn fn);

/* Called when rtl ends the process over a region trap it cannot resolve,
 * after its diagnostic and before the signal's default action takes the
 * process (sig: SIGSEGV). */
typedef void (*rtl_death_hook_fn)(int sig);
RTL_PRIVATE_API void rtl_hook_death(rtl_death_hook_fn fn);

/* Called for a SIGSEGV that is not rtl's (sent, or a fault outside its
 * regions) before it goes to the program's action: non-zero if the program
 * blocks SIGSEGV in this thread. The preload keeps that mask apart from the
 * kernel's, which never blocks SIGSEGV (a blocked fault would end the
 * process at the first region trap); the hook keeps a sent signal pending
 * itself, and the trap path gives a fault the kernel's answer to a blocked
 * one: the default action. uc is the interrupted context. NULL: none. */
typedef int (*rtl_blocked_hook_fn)(const siginfo_t *si, void *uc);
RTL_PRIVATE_API void rtl_hook_blocked(rtl_blocked_hook_fn fn);

/* Called to run the program's SIGSEGV handler act (not SIG_DFL or SIG_IGN)
 * as the kernel would: act's mask blocked meanwhile, the handler called
 * with sig, si and uc. NULL: the trap path does it itself. */
typedef void (*rtl_run_handler_fn)(const struct sigaction *act, int sig,
                                   siginfo_t *si, void *uc);
RTL_PRIVATE_API void rtl_hook_run_handler(rtl_run_handler_fn fn);

/* ---- for the trap path ---- */

int rtl_hooks_real_sigaction(int sig, const struct sigaction *act,
                             struct sigaction *old);
/* The fault filter is asked on every trap: inline, one load when none is
 * installed. */
extern _Atomic(rtl_fault_filter_fn) rtl_hooks_filter_fn;
static inline int rtl_hooks_filter(uintptr_t addr, int write)
{
	rtl_fault_filter_fn f =
	        atomic_load_explicit(&rtl_hooks_filter_fn, memory_order_acquire);

	return f && f((void *)addr, write);
}
int rtl_hooks_foreign(uintptr_t addr, int write, int sig, void *uc);
void rtl_hooks_death(int sig);
int rtl_hooks_blocked(const siginfo_t *si, void *uc);
int rtl_hooks_run_handler(const struct sigaction *act, int sig, siginfo_t *si,
                          void *uc);

#endif
