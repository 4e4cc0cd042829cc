/* Allocation counters, striped (tally.h). */
#include "preload/engine/tally.h"

#include <stddef.h>

struct rtl_stripe rtl_stripes[RTL_STRIPES];
RTL_TLS unsigned rtl_my_stripe;
static _Atomic unsigned next_stripe;
/* 1 + the highest stripe a thread took: the stripes above are all zero. */
static _Atomic unsigned stripes_used;

unsigned rtl_stripe_choose(void)
{
	unsigned s = atomic_fetch_add_explicit(&next_stripe, 1,
	                                       memory_order_relaxed) %
	             RTL_STRIPES;
	unsigned u = atomic_load_explicit(&stripes_used, memory_order_relaxed);

	while (u < s + 1 &&
	       !atomic_compare_exchange_weak_explicit(&stripes_used, &u, s + 1,
	                                              memory_order_relaxed,
	                                              memory_order_relaxed))
		;
	rtl_my_stripe = s + 1;
	return s;
}

unsigned rtl_stripes_used(void)
{
	return atomic_load_explicit(&stripes_used, memory_order_relaxed);
}

uint64_t rtl_tally_sum(const _Atomic uint64_t *in_first)
{
	size_t at = (size_t)((const char *)in_first - (const char *)&rtl_stripes[0]);
	uint64_t sum = 0;

	for (unsigned s = 0, n = rtl_stripes_used(); s < n; s++)
		sum += atomic_load_explicit(
		        (const _Atomic uint64_t *)((const char *)&rtl_stripes[s] + at),
		        memory_order_relaxed);
	return sum;
}

uint64_t rtl_tally_selected(void)
{
	uint64_t n = 0;

	for (int i = 0; i < RTL_POLICY_MAX_RULES; i++)
		n += RTL_TALLY_SUM(rule_allocs[i]);
	return n;
}

uint64_t rtl_tally_bytes(void)
{
	uint64_t n = 0;

	for (int i = 0; i < RTL_POLICY_MAX_RULES; i++)
		n += RTL_TALLY_SUM(rule_bytes[i]);
	return n;
}

/* In a forked child: one thread, the stripes used are known exactly. */
void rtl_tally_reset(void)
{
	for (unsigned s = 0, n = rtl_stripes_used(); s < n; s++) {
		struct rtl_stripe *st = &rtl_stripes[s];

		atomic_store(&st->seen, 0);
		atomic_store(&st->live_high,
		             (int64_t)(atomic_load(&st->made) - atomic_load(&st->freed)));
		for (int i = 0; i < RTL_POLICY_MAX_RULES; i++) {
			atomic_store(&st->rule_allocs[i], 0);
			atomic_store(&st->rule_bytes[i], 0);
		}
	}
}
