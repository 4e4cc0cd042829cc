/* Per-interval counts per rule, for the report's timeline (timeline.c):
 * traps, grants, regions made and freed in each interval of the run. A
 * table mapped at start: 256 intervals whose width doubles when the run
 * outgrows them (adjacent pairs merged), so a run of any length keeps at
 * most 256, the first a tick of CLOCK_MONOTONIC_COARSE wide (4 ms: 2^22
 * ns here), or 1 ms where ticks are shorter. Counted on the trap path and
 * in malloc: relaxed atomics only, no malloc, no lock. */
#ifndef RTL_TIMELINE_H
#define RTL_TIMELINE_H

#include <stdint.h>

#define RTL_TIMELINE_INTERVALS 256
#define RTL_TIMELINE_SHIFT0 20 /* the first width: 2^20 ns, or the
                                  coarse clock's tick if longer */

enum rtl_timeline_counter {
	RTL_TL_TRAPS,  /* traps the rule counted (its count action) */
	RTL_TL_GRANTS, /* traps that raised a protection */
	RTL_TL_MADE,   /* regions made */
	RTL_TL_FREED,  /* regions freed */
	RTL_TL_COUNTERS,
};

/* The run starts now, with rules rules: the table is mapped (without it,
 * nothing is counted). Not from a handler. */
void rtl_timeline_start(int rules);

/* One more of counter for rule, now. Signal handler. */
void rtl_timeline_add(int rule, int counter);

/* For the record, at its end (signal handler too): the intervals widened
 * until now falls in one; the width's shift and the intervals in use. */
uint32_t rtl_timeline_close(unsigned *shift);
uint64_t rtl_timeline_count(int rule, uint32_t interval, int counter);
/* The rule's regions live when the timeline started (a forked child's
 * inherited ones; 0 in the program). */
uint64_t rtl_timeline_live_at_start(int rule);

/* In a forked child: the parent's live regions per rule become the
 * start's, every count 0, starting now. */
void rtl_timeline_forked(void);

#endif
