/* The policy engine's state (engine.c): the rules at run time, the
 * engine's settings and the run's totals. Built once in the constructor;
 * afterwards only counters change. */
#ifndef RTL_ENGINE_H
#define RTL_ENGINE_H

#include <stdatomic.h>
#include <stdint.h>

#include "policy/policy.h"
#include "preload/engine/select.h"

/* A rule at run time. */
struct rtl_rule_rt {
	const struct rtl_rule *r;
	struct rtl_choice choice;
	_Atomic uint64_t matched; /* for sampling */
	_Atomic uint64_t read_traps, write_traps;
	/* What a trap and a protection change cost at this rule's
	 * granularity (actions.c): traps the page mechanism took on a block
	 * that allowed the access while a neighbour on its page did not;
	 * grants and the bytes they made accessible; the bytes of the blocks
	 * that trapped; protection changes rtl made. */
	_Atomic uint64_t false_sharing, grants, granted_bytes, touched_bytes;
	_Atomic uint64_t prot_changes;
};

struct rtl_engine {
	struct rtl_policy policy;
	struct rtl_rule_rt rules[RTL_POLICY_MAX_RULES];
	char report[RTL_POLICY_PATH_MAX]; /* template, after RTL_REPORT */
	int needs_site;                   /* a rule has a site glob */
	int names_early;                  /* resolve site names at allocation (log, abort) */
	int any_alias, any_slots, any_page, any_dirty, any_epoch, any_traps;
	int any_auto, any_prot;
	int any_swizzle_traps; /* regions that move pointers: rtl's decoder */
	int any_wbits;         /* a rule tracks by the kernel's written bits */
	const char *dirty_why; /* which way dirty rules see writes, and why */
	int any_tag;           /* a rule's blocks are on memory tags */
	int tag_auto;          /* a tag rule's blocks are placed as auto */
	const char *tag_why;   /* whether the machine has tags, and why not */
	int sigsys_failed;     /* errno of a filter the kernel refused, or 0 */
	uint64_t start_ns;
};
extern struct rtl_engine rtl_engine;

/* Counters for the report, relaxed atomics (signal handlers too). */
struct rtl_totals {
	_Atomic uint64_t read_traps, write_traps;   /* region handler, alias, syscalls */
	_Atomic uint64_t alias_stale;               /* alias faults already allowed */
	_Atomic uint64_t alias_ns;                  /* in the alias fault handler */
	_Atomic uint64_t peak;                      /* live regions, at most */
	_Atomic uint64_t mprotect_calls;            /* with mprotect = log */
	_Atomic uint64_t fallbacks[RTL_NFALLBACKS]; /* RTL_FALLBACK_* */
	_Atomic uint64_t libc_skipped;              /* callers inside libc or ld.so */
	_Atomic uint64_t alias_syscalls;            /* alias buffers resolved for a call */
	_Atomic uint64_t kept_pinned;               /* freed while pinned: kept (heap.c) */
	/* the rules' sums (engine.h's rtl_rule_rt); false sharing also counts
	 * page traps on bytes of no live block */
	_Atomic uint64_t false_sharing, grants, granted_bytes, touched_bytes;
	_Atomic uint64_t prot_changes;
};
extern struct rtl_totals rtl_totals;

uint64_t rtl_allocations(void); /* seen by the shim since start */

#endif
