/* The minimal policy's rules, shared by its reader (policy.c) and its
 * actions (actions.c). Built once in the constructor, read-only after,
 * except for the counters. Replaced by the policy engine. */
#ifndef RTL_PRELOAD_POLICY_H
#define RTL_PRELOAD_POLICY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "select.h"

#define RTL_MAX_RULES 64

/* Actions on a trap (on_read, on_write). */
enum {
	RTL_ACT_COUNT = 1,
	RTL_ACT_GRANT_READ = 2,
	RTL_ACT_GRANT_RW = 4,
};

struct rtl_rule {
	char name[64];
	size_t min, max;          /* sizes matched, both ends included */
	uint64_t sample;          /* route 1 in sample matches */
	int on_read, on_write;    /* RTL_ACT_* */
	struct rtl_choice choice; /* data points back at the rule */
	_Atomic uint64_t matched; /* for sampling */
	_Atomic uint64_t read_traps, write_traps;
};

struct rtl_policy {
	const char *file;       /* RTL_CONFIG */
	char report[256];       /* [rtl] report: "" none, "-" stderr, else path */
	uint64_t max_regions;   /* [rtl] max_regions */
	int nrules;
	struct rtl_rule rules[RTL_MAX_RULES];
};

extern struct rtl_policy rtl_policy;

/* The trap handler every selected region gets (actions.c). Runs in the
 * SIGSEGV handler: counters and region_protect only. */
void rtl_rule_trap(rtl_trap_t *trap);

#endif
