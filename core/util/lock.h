/* The one spin lock of rtl and its preload. It records its owner thread.
 *
 * rtl takes these only around short critical sections that never touch region
 * memory, so a signal handler can take one: the interrupted code can never be
 * the holder. Re-entry by the owner (a nested trap in the same thread) is
 * refused with EDEADLK instead of spinning forever. The owner is the thread's
 * pthread_self(), a read of the thread pointer: unique among live threads,
 * and still the same thread's in a forked child, so nothing is reset at
 * fork but the locks themselves. */
#ifndef RTL_LOCK_H
#define RTL_LOCK_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/util/relax.h"

struct rtl_lock {
	_Atomic uintptr_t owner; /* 0: free; otherwise the holder's thread */
};

#define RTL_LOCK_INIT \
	{             \
		0     \
	}

static inline uintptr_t rtl_lock_self(void)
{
	return (uintptr_t)pthread_self();
}

/* Take it if it is free now: 0, or -1 (EBUSY; EDEADLK if this thread holds
 * it). */
static inline int rtl_lock_try(struct rtl_lock *l)
{
	uintptr_t me = rtl_lock_self(), expected = 0;

	if (atomic_compare_exchange_strong_explicit(&l->owner, &expected, me,
	                                            memory_order_acquire,
	                                            memory_order_relaxed))
		return 0;
	errno = expected == me ? EDEADLK : EBUSY;
	return -1;
}

static inline int rtl_lock_acquire(struct rtl_lock *l)
{
	uintptr_t me = rtl_lock_self();

	if (atomic_load_explicit(&l->owner, memory_order_relaxed) == me) {
		errno = EDEADLK;
		return -1;
	}
	for (;;) {
		uintptr_t expected = 0;
		if (atomic_compare_exchange_weak_explicit(&l->owner, &expected, me,
		                                          memory_order_acquire,
		                                          memory_order_relaxed))
			return 0;
		while (atomic_load_explicit(&l->owner, memory_order_relaxed) != 0)
			rtl_cpu_relax();
	}
}

static inline void rtl_lock_release(struct rtl_lock *l)
{
	atomic_store_explicit(&l->owner, 0, memory_order_release);
}

/* Only for the child after fork, where the holder may not have come along. */
static inline void rtl_lock_reset(struct rtl_lock *l)
{
	atomic_store_explicit(&l->owner, 0, memory_order_relaxed);
}

#endif
