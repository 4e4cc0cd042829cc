/* Which allocations become regions, and what a trap on them does: the
 * interface between the preload's allocator shim and the policy. policy.c
 * is a minimal reader of the policy file (size and protect); the policy
 * engine replaces it behind this same header. */
#ifndef RTL_SELECT_H
#define RTL_SELECT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "rtl/region.h"

/* What to do with one selected allocation. Lives as long as the process. */
struct rtl_choice {
	int prot;                 /* PROT_NONE, PROT_READ or PROT_READ|PROT_WRITE */
	region_handler_t handler; /* for traps on the region (NULL: none) */
	void *data;               /* the region's user data (the rule) */
	_Atomic uint64_t allocs;  /* regions made for it (the shim counts) */
};

/* Read the policy named by RTL_CONFIG (no variable, or an empty one: nothing
 * is selected). Returns 1 if some allocation may be selected, 0 if none can
 * be, -1 if the policy is bad (reported on stderr as FILE:LINE: message;
 * nothing is selected then). Runs once, in the constructor. */
int rtl_select_init(void);

/* The most regions the preload may keep live at once. */
uint64_t rtl_select_max_regions(void);

/* The choice for an allocation of size bytes requested from caller (the
 * return address of malloc), or NULL to leave it to the next allocator.
 * Called on every allocation: no malloc, no locks. */
const struct rtl_choice *rtl_select(size_t size, const void *caller);

/* At exit: the report, if the policy asks for one. */
void rtl_select_report(void);

/* In a forked child: counts start again from zero. */
void rtl_select_forked(void);

#endif
