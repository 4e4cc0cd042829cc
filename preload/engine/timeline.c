/* The timeline's counts (timeline.h). Runs in the SIGSEGV handler and in
 * malloc: relaxed atomics only, no malloc, no lock the interrupted code
 * may hold, no waiting on another thread.
 *
 * Time is CLOCK_MONOTONIC_COARSE's: the time of the last clock tick (4 ms
 * apart here), read in about 5 ns where CLOCK_MONOTONIC takes 24: a region
 * made and freed costs two reads on the allocation path (a selected
 * malloc and free, about 330 ns here). An interval is never narrower than
 * a tick, so each count lands in its interval or the one before. Regions
 * made and freed add to their thread's stripe (tally.h): threads
 * allocating at once write no shared cache line.
 *
 * Widening: the thread whose time falls past the last interval takes the
 * widening flag (a compare-and-swap; none waits for it: a count that finds
 * it taken goes to the last interval), merges each pair of intervals into
 * one, from the first on, with an exchange of each old count and an add to
 * its new place, then doubles the width. No count is lost: one added to an
 * interval meanwhile stays in its place or moves with it. A count racing a
 * widening may land an interval late; the sums are exact. */
#include "preload/engine/timeline.h"

#include <stdatomic.h>
#include <sys/mman.h>
#include <time.h>

#include "policy/policy.h"
#include "preload/engine/tally.h"

#define N RTL_TIMELINE_INTERVALS

/* Two counts per interval: traps and grants for every thread at once
 * (traps[rule][interval][2]); regions made and freed per stripe
 * (made[stripe][rule][interval][2]). Mapped at start for the policy's
 * rules: 16 KiB of the first, 64 KiB of the second per rule, touched only
 * where counted. */
typedef _Atomic uint64_t pair[2];
static pair *traps, *made;
static uint64_t live_at_start[RTL_POLICY_MAX_RULES];
static uint64_t start;
static int nrules;
static unsigned shift0 = RTL_TIMELINE_SHIFT0; /* at least a tick */
static _Atomic unsigned shift = RTL_TIMELINE_SHIFT0;
static _Atomic int widening;

static _Atomic uint64_t *trap_cell(int rule, int i, int c)
{
	return &traps[(size_t)rule * N + (size_t)i][c];
}

static _Atomic uint64_t *made_cell(int stripe, int rule, int i, int c)
{
	return &made[((size_t)stripe * (size_t)nrules + (size_t)rule) * N + (size_t)i][c];
}

static uint64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void rtl_timeline_start(int rules)
{
	size_t n = rules < RTL_POLICY_MAX_RULES ? (size_t)rules : RTL_POLICY_MAX_RULES;
	size_t bytes = (1 + RTL_STRIPES) * n * N * sizeof(pair);
	struct timespec res;
	void *p;

	start = coarse_ns();
	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0 && !res.tv_sec)
		while (shift0 < 30 && ((uint64_t)1 << shift0) < (uint64_t)res.tv_nsec)
			shift0++;
	atomic_store_explicit(&shift, shift0, memory_order_relaxed);
	if (!n)
		return;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return; /* no timeline: the report has none */
	traps = p;
	made = traps + n * N;
	nrules = (int)n;
}

/* A count, zeroed; a zero is only read, so that the pages of the stripes
 * no thread took stay untouched (a count that lands after the read stays
 * in place, as one after the exchange would). */
static uint64_t take(_Atomic uint64_t *c)
{
	if (!atomic_load_explicit(c, memory_order_relaxed))
		return 0;
	return atomic_exchange_explicit(c, 0, memory_order_relaxed);
}

/* Interval i of a series whose interval k is at(k): pairs merged. */
static void merge(_Atomic uint64_t *(*at)(int, int, int, int), int s, int rule)
{
	for (int i = 0; i < N / 2; i++)
		for (int c = 0; c < 2; c++) {
			uint64_t v = take(at(s, rule, 2 * i, c)) + take(at(s, rule, 2 * i + 1, c));

			if (v)
				atomic_fetch_add_explicit(at(s, rule, i, c), v,
				                          memory_order_relaxed);
		}
}

static _Atomic uint64_t *trap_at(int s, int rule, int i, int c)
{
	(void)s;
	return trap_cell(rule, i, c);
}

/* Double the width from 2^s, unless another thread is at it (0) or has
 * done it already. */
static int widen(unsigned s)
{
	int idle = 0;

	if (!atomic_compare_exchange_strong_explicit(&widening, &idle, 1,
	                                             memory_order_relaxed,
	                                             memory_order_relaxed))
		return 0;
	if (atomic_load_explicit(&shift, memory_order_relaxed) == s) {
		for (int r = 0; r < nrules; r++) {
			merge(trap_at, 0, r);
			for (int k = 0; k < RTL_STRIPES; k++)
				merge(made_cell, k, r);
		}
		atomic_store_explicit(&shift, s + 1, memory_order_relaxed);
	}
	atomic_store_explicit(&widening, 0, memory_order_relaxed);
	return 1;
}

/* The interval of time now, widening as needed. */
static int interval_at(uint64_t now)
{
	uint64_t t = now > start ? now - start : 0;

	for (;;) {
		unsigned s = atomic_load_explicit(&shift, memory_order_relaxed);

		if ((t >> s) < N)
			return (int)(t >> s);
		if (!widen(s))
			return N - 1;
	}
}

void rtl_timeline_add(int rule, int counter)
{
	if (rule < 0 || rule >= nrules)
		return;
	if (counter == RTL_TL_TRAPS || counter == RTL_TL_GRANTS) {
		atomic_fetch_add_explicit(trap_cell(rule, interval_at(coarse_ns()), counter),
		                          1, memory_order_relaxed);
		return;
	}
	atomic_fetch_add_explicit(made_cell((int)rtl_stripe_index(), rule,
	                                    interval_at(coarse_ns()),
	                                    counter - RTL_TL_MADE),
	                          1, memory_order_relaxed);
}

uint32_t rtl_timeline_close(unsigned *s)
{
	int last = interval_at(coarse_ns());

	*s = atomic_load_explicit(&shift, memory_order_relaxed);
	return nrules ? (uint32_t)last + 1 : 0;
}

uint64_t rtl_timeline_count(int rule, uint32_t interval, int counter)
{
	uint64_t sum = 0;

	if (rule < 0 || rule >= nrules || interval >= N)
		return 0;
	if (counter == RTL_TL_TRAPS || counter == RTL_TL_GRANTS)
		return atomic_load_explicit(trap_cell(rule, (int)interval, counter),
		                            memory_order_relaxed);
	for (unsigned k = 0, n = rtl_stripes_used(); k < n; k++)
		sum += atomic_load_explicit(made_cell(k, rule, (int)interval,
		                                      counter - RTL_TL_MADE),
		                            memory_order_relaxed);
	return sum;
}

uint64_t rtl_timeline_live_at_start(int rule)
{
	return rule >= 0 && rule < nrules ? live_at_start[rule] : 0;
}

void rtl_timeline_forked(void)
{
	for (int r = 0; r < nrules; r++) {
		int64_t live = (int64_t)live_at_start[r];

		for (int i = 0; i < N; i++) {
			for (unsigned k = 0, n = rtl_stripes_used(); k < n; k++) {
				live += (int64_t)take(made_cell(k, r, i, 0));
				live -= (int64_t)take(made_cell(k, r, i, 1));
			}
			take(trap_cell(r, i, 0));
			take(trap_cell(r, i, 1));
		}
		live_at_start[r] = live > 0 ? (uint64_t)live : 0;
	}
	atomic_store_explicit(&shift, shift0, memory_order_relaxed);
	atomic_store_explicit(&widening, 0, memory_order_relaxed);
	start = coarse_ns();
}
