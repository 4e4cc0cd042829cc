/* Start and end of the preload: read the policy, and only if it can select
 * something start rtl and the arenas; write the report at exit if asked.
 * A program that selects nothing pays for a policy read and nothing more:
 * rtl's views are not even mapped. Prints nothing unless something fails
 * or the policy asks for a report. */
#include "preload.h"

#include <pthread.h>
#include <stdio.h>

#include "rtl/ext.h"
#include "select.h"

_Atomic int rtl_preload_on;

static void forked_child(void)
{
	rtl_mprotect_fork_done();
	rtl_select_forked();
}

static void start(void)
{
	int sel;

	/* rtl gets the real sigaction and the mprotect filter whether or not
	 * the preload selects: a program using the region API directly may
	 * start rtl later. */
	rtl_signals_ready();
	rtl_ext_set_fault_filter(rtl_mprotect_claims);
	/* The mprotect table's flag is taken with nothing else held and holds
	 * nothing: any order against rtl's and jemalloc's handlers is safe. */
	pthread_atfork(rtl_mprotect_fork_prepare, rtl_mprotect_fork_done,
	               forked_child);
	sel = rtl_select_init();
	if (sel <= 0)
		return;
	/* rtl first, jemalloc second (jemalloc starts on its first mallctl):
	 * at fork, jemalloc's prepare then runs before rtl's. Not required (the
	 * extent hooks take no lock, so the two never nest), but natural. */
	if (rtl_ext_init() < 0)
		return; /* rtl said why */
	if (rtl_heap_init(rtl_select_max_regions()) < 0) {
		perror("rtl: preload: cannot set up the arenas; nothing selected");
		return;
	}
	atomic_store_explicit(&rtl_preload_on, 1, memory_order_release);
}

__attribute__((constructor)) static void preload_start(void)
{
	rtl_preload_busy++;
	if (rtl_next())
		start();
	rtl_preload_busy--;
}

__attribute__((destructor)) static void preload_stop(void)
{
	rtl_preload_busy++;
	rtl_select_report();
	rtl_preload_busy--;
}
