/* A sleeping lock for the short sections that define and free regions
 * (records.h's shard locks): a word and the futex system call.
 *
 * Why not pthread_mutex_t: an adaptive glibc mutex costs about 70
 * instructions a lock and unlock (its type is dispatched at every call),
 * and defining and freeing a block under the preload takes two of them
 * each; this one costs a compare-and-swap and an exchange uncontended
 * (callgrind, rtl-malloc-bench). Like the adaptive mutex, a waiter spins a
 * while before it sleeps. Not for signal handlers (rtl_lock is).
 *
 * The word: 0 free, 1 held, 2 held and someone may sleep on it. */
#ifndef RTL_MUTEX_H
#define RTL_MUTEX_H

#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/util/relax.h"

struct rtl_mutex {
	_Atomic int word;
};

#define RTL_MUTEX_INIT \
	{              \
		0      \
	}

#define RTL_MUTEX_SPINS 100

static inline void rtl_mutex_lock_slow(struct rtl_mutex *m)
{
	int c;

	for (int i = 0; i < RTL_MUTEX_SPINS; i++) {
		c = 0;
		if (atomic_load_explicit(&m->word, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_weak_explicit(&m->word, &c, 1,
		                                          memory_order_acquire,
		                                          memory_order_relaxed))
			return;
		rtl_cpu_relax();
	}
	/* Sleep: mark it contended; whoever leaves it then wakes one. */
	while (atomic_exchange_explicit(&m->word, 2, memory_order_acquire) != 0)
		syscall(SYS_futex, &m->word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

static inline void rtl_mutex_lock(struct rtl_mutex *m)
{
	int c = 0;

	if (!atomic_compare_exchange_strong_explicit(&m->word, &c, 1,
	                                             memory_order_acquire,
	                                             memory_order_relaxed))
		rtl_mutex_lock_slow(m);
}

static inline void rtl_mutex_unlock(struct rtl_mutex *m)
{
	if (atomic_exchange_explicit(&m->word, 0, memory_order_release) == 2)
		syscall(SYS_futex, &m->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

#endif
