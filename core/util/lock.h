/* The one spin lock of rtl and its preload. It records its owner thread.
 *
 * rtl takes these only around short critical sections that never touch region
 * memory, so a signal handler can take one: the interrupted code can never be
 * the holder. Re-entry by the owner (a nested trap in the same thread) is
 * refused with EDEADLK instead of spinning forever. The owner is the thread's
 * pthread_self(), a read of the thread pointer: unique among live threads,
 * and still the same thread's in a forked child.
 *
 * A lock a thread held when another thread forked is held in the child by a
 * thread that did not come along. Each owner is stamped with the count of
 * forks its process descends through (rtl_lock_forks, raised by the first
 * fork handler to run in a child): a waiter that finds an owner of another
 * count, and not itself, takes the lock over. That covers every lock by
 * construction; the resets at fork of the locks rtl knows stay, and free
 * them before anything waits. */
#ifndef RTL_LOCK_H
#define RTL_LOCK_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/util/export.h"
#include "core/util/relax.h"

struct rtl_lock {
	_Atomic uintptr_t owner; /* 0: free; otherwise the holder's thread */
};

#define RTL_LOCK_INIT \
	{             \
		0     \
	}

/* The low bits of an owner: its process's fork count, modulo 16. Thread
 * descriptors are far more than 16 bytes apart, so the rest still tells
 * threads apart. */
#define RTL_LOCK_FORK_BITS ((uintptr_t)15)

/* Forks this process descends through (core/start/fork.c). */
extern RTL_PRIVATE_API _Atomic unsigned rtl_lock_forks;

static inline uintptr_t rtl_lock_self(void)
{
	return ((uintptr_t)pthread_self() & ~RTL_LOCK_FORK_BITS) |
	       (atomic_load_explicit(&rtl_lock_forks, memory_order_relaxed) &
	        RTL_LOCK_FORK_BITS);
}

/* Whether owner is this thread (me: rtl_lock_self()), of any fork count. */
static inline int rtl_lock_is_me(uintptr_t owner, uintptr_t me)
{
	return ((owner ^ me) & ~RTL_LOCK_FORK_BITS) == 0;
}

/* Whether owner took the lock before a fork that made this process, and is
 * not this thread: a thread that did not come along. */
static inline int rtl_lock_orphaned(uintptr_t owner, uintptr_t me)
{
	return ((owner ^ me) & RTL_LOCK_FORK_BITS) != 0 && !rtl_lock_is_me(owner, me);
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
	if (rtl_lock_orphaned(expected, me) &&
	    atomic_compare_exchange_strong_explicit(&l->owner, &expected, me,
	                                            memory_order_acquire,
	                                            memory_order_relaxed))
		return 0;
	errno = rtl_lock_is_me(expected, me) ? EDEADLK : EBUSY;
	return -1;
}

static inline int rtl_lock_acquire(struct rtl_lock *l)
{
	uintptr_t me = rtl_lock_self(), seen;

	if (rtl_lock_is_me(atomic_load_explicit(&l->owner, memory_order_relaxed), me)) {
		errno = EDEADLK;
		return -1;
	}
	for (;;) {
		uintptr_t expected = 0;
		if (atomic_compare_exchange_weak_explicit(&l->owner, &expected, me,
		                                          memory_order_acquire,
		                                          memory_order_relaxed))
			return 0;
		while ((seen = atomic_load_explicit(&l->owner, memory_order_relaxed)) != 0) {
			if (rtl_lock_orphaned(seen, me) &&
			    atomic_compare_exchange_strong_explicit(
			            &l->owner, &seen, me, memory_order_acquire,
			            memory_order_relaxed))
				return 0;
			rtl_cpu_relax();
		}
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
