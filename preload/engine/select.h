/* Which allocations become regions, and what a trap on them does: the
 * interface between the preload's allocator shim (malloc.c, heap.c) and the
 * policy engine (engine.c and the files it names). Nothing here may be
 * called from a signal handler unless it says so. */
#ifndef RTL_SELECT_H
#define RTL_SELECT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <rtl/region.h>

/* What to do with one selected allocation: one per rule, for the life of the
 * process. */
struct rtl_choice {
	int prot;                 /* at allocation: PROT_NONE, PROT_READ, RW */
	int mechanism;            /* RTL_MECH_AUTO, _ALIAS or _SWIZZLE */
	int rule;                 /* index in the policy */
	int track;                /* dirty: track writes */
	int traps;                /* its regions can trap: prot below rw,
	                             dirty, or an epoch */
	int wbits;                /* dirty by the kernel's written bits: its
	                             blocks are writable regions in rtl's views
	                             (rtl_select_start, engine.c) */
	int tag_else_auto;        /* tag: what tags cannot take goes auto's
	                             way (an auto rule on tags) */
	region_handler_t handler; /* swizzle: the trap handler (NULL: none) */
};

/* Read the policy: the file RTL_CONFIG names, or the built-in one when it is
 * unset or empty. Returns 1 if some allocation may be selected, 0 if none
 * can be, -1 if the policy is bad (reported on stderr as FILE:LINE: message;
 * nothing is selected then). Runs once, in the constructor. */
int rtl_select_init(void);

/* After rtl and the arenas started: the engine's own start (records, alias
 * space, threads). -1 if it cannot; nothing is selected then. */
int rtl_select_start(void);

/* The most regions the preload may keep live at once. */
uint64_t rtl_select_max_regions(void);

/* The choice for an allocation of size bytes whose malloc-family call
 * returns to caller, or NULL to leave it to the next allocator; *site is the
 * allocating site's handle for the records. Called on every allocation once
 * the preload runs, outside the re-entrancy guard: no locks, and anything
 * that may allocate is done under the guard. */
const struct rtl_choice *rtl_select(size_t size, const void *caller,
                                    uint32_t *site);

/* The allocation was selected but the next allocator served it (views
 * full, max_regions): for the report. */
void rtl_select_fallback(const struct rtl_choice *c, int why);
enum {
	RTL_FALLBACK_FULL,
	RTL_FALLBACK_MAX_REGIONS,
	RTL_FALLBACK_MAPS,
	RTL_FALLBACK_SLOTS, /* auto: every copy of its page had a live block */
	RTL_FALLBACK_TAGS,  /* tag: an alignment above 16, the tag arena full */
	RTL_NFALLBACKS
};

/* At exit: the report, if the policy asks for one. status: the exit
 * status, or -1 if unknown. */
void rtl_select_report(int status);

/* In a forked child: counts start again from zero. */
void rtl_select_forked(void);

#endif
