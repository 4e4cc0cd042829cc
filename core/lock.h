/* A tiny spin lock that records its owner thread.
 *
 * rtl takes these only around short critical sections that never touch region
 * memory, so the trap handler can take one: the interrupted code can never be
 * the holder. Re-entry by the owner (a nested trap in the same thread) is
 * refused with EDEADLK instead of spinning forever. */
#ifndef RTL_LOCK_H
#define RTL_LOCK_H

#include <errno.h>
#include <stdatomic.h>

struct rtl_lock {
	_Atomic int owner; /* 0: free; otherwise the holder's thread id */
};

int rtl_tid(void);        /* cached gettid(), async-signal-safe */
void rtl_tid_reset(void); /* after fork, in the child */

static inline int rtl_lock_acquire(struct rtl_lock *l)
{
	int me = rtl_tid();
	if (atomic_load_explicit(&l->owner, memory_order_relaxed) == me) {
		errno = EDEADLK;
		return -1;
	}
	for (;;) {
		int expected = 0;
		if (atomic_compare_exchange_weak_explicit(&l->owner, &expected, me,
		                                          memory_order_acquire,
		                                          memory_order_relaxed))
			return 0;
		while (atomic_load_explicit(&l->owner, memory_order_relaxed) != 0)
			__builtin_ia32_pause();
	}
}

static inline void rtl_lock_release(struct rtl_lock *l)
{
	atomic_store_explicit(&l->owner, 0, memory_order_release);
}

/* Only for the child after fork, where the holder no longer exists. */
static inline void rtl_lock_reset(struct rtl_lock *l)
{
	atomic_store_explicit(&l->owner, 0, memory_order_relaxed);
}

#endif
