/* Start and end of the preload: read the policy, and only if it can select
 * something start rtl, the arenas and the engine; write the report at exit
 * (with the exit status: main is wrapped so that an on_exit handler runs
 * before the libraries' destructors) or on a fatal signal. A program that
 * selects nothing pays for a policy read and nothing more: rtl's views are
 * not even mapped. Prints nothing unless something fails or the policy
 * sends the report to stderr; in a secure-execution process, nothing at
 * all. */
#include "preload/shim/start.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>

#include "core/prot/prot.h"
#include "core/start/init.h"
#include "core/trap/hooks.h"
#include <rtl/region.h>
#include "preload/engine/engine.h"
#include "preload/engine/select.h"
#include "preload/place/heap.h"
#include "preload/shim/children.h"
#include "preload/shim/forward.h"
#include "preload/shim/mprotect.h"
#include "preload/shim/next.h"
#include "preload/shim/sigmask.h"
#include "preload/shim/signals.h"
#include "preload/track/fatal.h"
#include "preload/track/track.h"

#define API __attribute__((visibility("default")))

_Atomic int rtl_preload_on;

static void mprotect_child(void)
{
	rtl_mprotect_fork_done();
}

/* Registered last, so that in a child rtl's views and the aliases are the
 * child's own before the engine starts its threads again. */
static void engine_child(void)
{
	rtl_select_forked();
}

static void start(void)
{
	int sel;

	/* rtl gets the real sigaction and the mprotect filter whether or not
	 * the preload selects: a program using the region API directly may
	 * start rtl later. */
	rtl_signals_ready();
	rtl_hook_fault_filter(rtl_mprotect_claims);
	/* The mprotect table's flag is taken with nothing else held and holds
	 * nothing: any order against rtl's and jemalloc's handlers is safe. */
	pthread_atfork(rtl_mprotect_fork_prepare, rtl_mprotect_fork_done,
	               mprotect_child);
	sel = rtl_select_init();
	/* A policy that selects nothing still reports at exit. */
	if (rtl_engine.report[0] && rtl_track_init() < 0)
		perror("rtl: preload: no report");
	if (sel <= 0)
		return;
	/* Before rtl starts: its handler then keeps ours as the action for
	 * SIGSEGVs that are not its own. */
	if (rtl_fatal_init() < 0)
		perror("rtl: preload: no report on fatal signals");
	/* rtl first, the arenas second (jemalloc starts at the first selected
	 * block, its fork handlers run from the arenas', arena.c). */
	/* Capstone is loaded only where a rule's regions move pointers: the
	 * exact mechanisms' traps never decode (init.h). */
	rtl_init_lazy_decoder();
	if (region_init() < 0)
		return; /* rtl said why */
	if (rtl_engine.any_swizzle_traps && rtl_init_decoder() < 0) {
		perror("rtl: preload: cannot start the decoder; nothing selected");
		return;
	}
	/* Where protection can live in the page tables, rtl takes SIGBUS as
	 * it takes SIGSEGV: before the masks and the program's handlers are
	 * kept apart from the kernel's (core/prot/prot.h). */
	if (rtl_engine.any_prot)
		rtl_prot_start();
	/* From now on a region may trap: SIGSEGV (and SIGBUS, if rtl takes
	 * it) stays out of the kernel's mask, whatever the program blocks. */
	rtl_sigmask_start();
	/* A death over a trap rtl cannot resolve writes the report too. */
	if (rtl_engine.report[0])
		rtl_hook_death(rtl_fatal_report);
	if (rtl_engine.report[0])
		region_time_traps(1); /* the report's trap_ns */
	if (rtl_heap_init(rtl_select_max_regions()) < 0) {
		perror("rtl: preload: cannot set up the arenas; nothing selected");
		return;
	}
	if (rtl_select_start() < 0) {
		perror("rtl: preload: cannot start the policy engine; nothing selected");
		return;
	}
	pthread_atfork(NULL, NULL, engine_child);
	atomic_store_explicit(&rtl_preload_on, 1, memory_order_release);
}

__attribute__((constructor)) static void preload_start(void)
{
	rtl_preload_busy++;
	rtl_forward_resolve();
	/* A secure-execution process (setuid, setgid, file capabilities: the
	 * loader's AT_SECURE) was started by someone it must not trust: the
	 * environment that names the policy and the report is theirs. It
	 * selects nothing, writes nothing, prints nothing. */
	if (rtl_next() && !getauxval(AT_SECURE)) {
		start();
		rtl_children_start(); /* after everything that reads RTL_* */
	}
	rtl_preload_busy--;
}

/* ---- the exit status ---- */

typedef int (*main_fn)(int, char **, char **);
static main_fn real_main;

static void at_exit(int status, void *arg)
{
	(void)arg;
	rtl_preload_busy++;
	rtl_select_report(status);
	rtl_preload_busy--;
}

static int wrapped_main(int argc, char **argv, char **envp)
{
	/* Registered now, after the loader's own exit handler: it runs before
	 * the libraries' destructors, and learns the status. */
	on_exit(at_exit, NULL);
	return real_main(argc, argv, envp);
}

API int __libc_start_main(main_fn main, int argc, char **argv,
                          void (*init)(void), void (*fini)(void),
                          void (*rtld_fini)(void), void *stack_end)
{
	int (*next)(main_fn, int, char **, void (*)(void), void (*)(void),
	            void (*)(void), void *);

	*(void **)&next = dlsym(RTLD_NEXT, "__libc_start_main");
	real_main = main;
	return next(wrapped_main, argc, argv, init, fini, rtld_fini, stack_end);
}

/* If main was never wrapped (a program that does not start through
 * __libc_start_main): the report without the status. */
__attribute__((destructor)) static void preload_stop(void)
{
	rtl_preload_busy++;
	rtl_select_report(RTL_STATUS_UNKNOWN);
	rtl_preload_busy--;
}
