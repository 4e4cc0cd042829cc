/* Allocation counters, striped: every selected (and every seen) allocation
 * adds to them, from any thread. Each thread takes a stripe round-robin at
 * its first allocation and keeps it, so threads on different cores do not
 * write one cache line; a report sums the stripes. Two threads may share a
 * stripe (more threads than stripes), so the adds stay atomic.
 * The record free lists (record.c) are split by the same index. */
#ifndef RTL_TALLY_H
#define RTL_TALLY_H

#include <stdatomic.h>
#include <stdint.h>

#include "policy/policy.h"
#include "preload/shim/next.h"

#define RTL_STRIPES 16

struct rtl_stripe {
	_Atomic uint64_t seen; /* allocations the engine was asked about */
	/* Regions made here and regions freed here (a region made in one
	 * thread may be freed in another's stripe): the live regions are
	 * the difference of their sums (rtl_heap_live). live_high: the most
	 * made - freed of this stripe was. */
	_Atomic uint64_t made;
	_Atomic uint64_t freed;
	_Atomic int64_t live_high;
	/* Regions made per rule and the bytes asked for by them (every
	 * region has a rule: the totals are their sums). */
	_Atomic uint64_t rule_allocs[RTL_POLICY_MAX_RULES];
	_Atomic uint64_t rule_bytes[RTL_POLICY_MAX_RULES];
} __attribute__((aligned(64)));

extern struct rtl_stripe rtl_stripes[RTL_STRIPES];
extern RTL_TLS unsigned rtl_my_stripe; /* index + 1; 0: not chosen yet */

unsigned rtl_stripe_choose(void);
/* How many stripes threads have taken (from 0 up): the rest hold zeros,
 * and sums need not read them (nor touch their pages). A thread that
 * takes one meanwhile counts as if after the sum. */
unsigned rtl_stripes_used(void);

/* This thread's stripe index. */
static inline unsigned rtl_stripe_index(void)
{
	unsigned s = rtl_my_stripe;

	return s ? s - 1 : rtl_stripe_choose();
}

static inline struct rtl_stripe *rtl_stripe(void)
{
	return &rtl_stripes[rtl_stripe_index()];
}

static inline void rtl_tally_add(_Atomic uint64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/* A field's sum over the stripes, named by its place in the first:
 * rtl_tally_sum(&rtl_stripes[0].rule_bytes[i]). */
uint64_t rtl_tally_sum(const _Atomic uint64_t *in_first);
#define RTL_TALLY_SUM(field) rtl_tally_sum(&rtl_stripes[0].field)

/* Regions made and their bytes, every rule's. */
uint64_t rtl_tally_selected(void);
uint64_t rtl_tally_bytes(void);

/* Every count back to zero (a forked child starts its own); the live
 * regions stay, as they do in the child, and are its highest so far. */
void rtl_tally_reset(void);

#endif
