/* The loader gate (loader.h): a count of the threads inside rtl's calls
 * into the loader and libunwind, and a flag a fork raises. A thread counts
 * itself in, then looks at the flag; the forking thread raises the flag,
 * then waits for the count to fall to its own: one of the two sees the
 * other (sequentially consistent atomics), so no thread is inside when the
 * child is made. glibc 2.36 resets the loader's dl_load_lock in a child but
 * not the lock dl_iterate_phdr takes, nor can it reset libunwind's.
 *
 * Enter and leave nest in a thread (a trap's backtrace over a site being
 * named): only the outermost counts. The trap path uses try_enter, which
 * never waits: a trap during a fork keeps no backtrace. */
#include "preload/engine/loader.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

static _Atomic int inside, forking;

#define TLS __attribute__((tls_model("initial-exec")))
static __thread int depth TLS;      /* this thread's nesting */
static __thread int this_forks TLS; /* this thread raised the flag */

int rtl_loader_try_enter(void)
{
	if (depth > 0) {
		depth++;
		return 1;
	}
	atomic_fetch_add(&inside, 1);
	if (atomic_load(&forking) && !this_forks) {
		atomic_fetch_sub(&inside, 1);
		return 0;
	}
	depth = 1;
	return 1;
}

void rtl_loader_enter(void)
{
	while (!rtl_loader_try_enter())
		sched_yield(); /* a fork is under way: it takes microseconds */
}

void rtl_loader_leave(void)
{
	if (--depth == 0)
		atomic_fetch_sub(&inside, 1);
}

static void fork_prepare(void)
{
	this_forks = 1;
	atomic_store(&forking, 1);
	while (atomic_load(&inside) > (depth > 0))
		sched_yield();
}

static void fork_done(void)
{
	atomic_store(&forking, 0);
	this_forks = 0;
}

void rtl_loader_start(void)
{
	pthread_atfork(fork_prepare, fork_done, fork_done);
}
