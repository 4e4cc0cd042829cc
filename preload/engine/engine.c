/* The policy engine: reads the policy (policy/: the file RTL_CONFIG names,
 * or the built-in one), makes a choice per rule, and picks the rule for each
 * allocation: size, then site, then 1 in `sample`, first match wins.
 * rtl_select runs on every allocation: no locks; whatever may allocate
 * (naming a site) runs under the re-entrancy guard. */
#include "preload/engine/engine.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/tag/mte.h"
#include "core/util/clock.h"
#include "interpose/access.h"
#include "interpose/sigsys.h"
#include "policy/policy.h"
#include "preload/engine/actions.h"
#include "preload/engine/epoch.h"
#include "preload/engine/loader.h"
#include "preload/engine/record.h"
#include "preload/engine/select.h"
#include "preload/engine/site.h"
#include "preload/engine/tally.h"
#include "preload/engine/timeline.h"
#include "preload/engine/trace.h"
#include "preload/engine/warn.h"
#include "preload/place/alias.h"
#include "preload/place/heap.h"
#include "preload/place/maps.h"
#include "preload/shim/next.h"
#include "preload/track/fatal.h"
#include "preload/track/track.h"

struct rtl_engine rtl_engine;
struct rtl_totals rtl_totals;

/* ---- allocations seen (tally.h) ---- */

static void count_allocation(void)
{
	rtl_tally_add(&rtl_stripe()->seen, 1);
}

uint64_t rtl_allocations(void)
{
	return RTL_TALLY_SUM(seen);
}

/* ---- the policy ---- */

/* Whether auto takes tags for r's blocks where the machine has them: a
 * rule whose blocks start with no access and whose every grant is
 * read-write, which tags keep exactly as auto's copies do, and with no
 * epoch (on hardware an epoch can protect a block again between a
 * system call's grant and the kernel's access: docs/mechanisms.md). */
static int auto_tags(const struct rtl_rule *r)
{
	return r->mechanism == RTL_MECH_AUTO && r->protect == PROT_NONE &&
	       rtl_policy_tag_fits(r) && !(r->on_read & RTL_ACT_GRANT_READ) &&
	       !r->epoch_ns;
}

/* mechanism = tag where the machine has memory tags and tags can hold
 * the rule's blocks (rtl_policy_tag_fits); else auto, and the report's
 * tag record says why. auto takes tags too where auto_tags says. The
 * probe turns tag checks on for this thread, the program's first (its
 * threads inherit them). */
static int placed(const struct rtl_rule *r)
{
	static char why[320];
	struct rtl_engine *e = &rtl_engine;
	const char *mte;
	int have;

	if (auto_tags(r) && rtl_mte_probe(&mte)) {
		if (!e->tag_why) {
			snprintf(why, sizeof(why), "%s", mte);
			e->tag_why = why;
		}
		e->any_tag = 1;
		return RTL_MECH_TAG;
	}
	if (r->mechanism != RTL_MECH_TAG)
		return r->mechanism;
	have = rtl_mte_probe(&mte);
	if (!e->tag_why) {
		snprintf(why, sizeof(why), "%s", mte);
		e->tag_why = why;
	}
	if (have && rtl_policy_tag_fits(r)) {
		e->any_tag = 1;
		return RTL_MECH_TAG;
	}
	if (have && strlen(why) + 80 + strlen(r->name) < sizeof(why))
		snprintf(why + strlen(why), sizeof(why) - strlen(why),
		         "; rule %s (%s) placed as auto", r->name,
		         r->protect == PROT_READ ? "protect = read" : "dirty");
	e->tag_auto = 1;
	return RTL_MECH_AUTO;
}

static void choose(struct rtl_rule_rt *rt, int i)
{
	const struct rtl_rule *r = rt->r;
	struct rtl_engine *e = &rtl_engine;
	unsigned acts = r->on_read | r->on_write;
	int mech = placed(r);
	/* An allocation of an auto rule on tags that tags cannot take (an
	 * alignment above 16 bytes, the tag arena full) goes auto's way
	 * (heap.c), with auto's machinery; a tag rule's goes to the next
	 * allocator (fallbacks), and its process maps nothing of auto's
	 * (under qemu-user those reservations alone cost 0.8 GiB and 5 s). */
	int way = mech == RTL_MECH_TAG && r->mechanism == RTL_MECH_AUTO ? RTL_MECH_AUTO : mech;

	rt->choice.rule = i;
	rt->choice.mechanism = mech;
	rt->choice.tag_else_auto = mech == RTL_MECH_TAG && way == RTL_MECH_AUTO;
	rt->choice.track = (r->on_write & RTL_ACT_DIRTY) != 0;
	rt->choice.prot = r->protect;
	/* A write that does not trap cannot be tracked: a dirty rule's
	 * regions start (and start each epoch) at most read-only. */
	if (rt->choice.track && r->protect == (PROT_READ | PROT_WRITE))
		rt->choice.prot = PROT_READ;
	rt->choice.traps = rt->choice.prot != (PROT_READ | PROT_WRITE) ||
	                   rt->choice.track || r->epoch_ns;
	/* auto's blocks of whole pages are regions protected in place, with
	 * the handler; its smaller blocks, like alias objects, have pages of
	 * their own (slots). page blocks are no regions: they live in the
	 * alias reservation's page copy (page.c). */
	if (way == RTL_MECH_SWIZZLE || way == RTL_MECH_AUTO)
		rt->choice.handler = rtl_act_swizzle_trap;
	if (way != RTL_MECH_SWIZZLE && way != RTL_MECH_TAG)
		e->any_alias = 1;
	if (way == RTL_MECH_AUTO || way == RTL_MECH_ALIAS)
		e->any_slots = 1; /* auto's small blocks, alias objects */
	if (way == RTL_MECH_AUTO)
		e->any_auto = 1;
	/* Protection changes outside rtl's views: the backend probes the
	 * kernel for page tables (core/prot/prot.h). */
	if (rt->choice.traps && way != RTL_MECH_SWIZZLE && way != RTL_MECH_TAG)
		e->any_prot = 1;
	if (mech == RTL_MECH_PAGE)
		e->any_page = 1;
	if (rt->choice.track)
		e->any_dirty = 1;
	/* Written bits where the write need not trap: dirty is its only
	 * action that sees it (rtl_select_start asks the kernel). */
	rt->choice.wbits = rt->choice.track && r->protect != PROT_NONE &&
	                   !(r->on_write & (RTL_ACT_COUNT | RTL_ACT_LOG |
	                                    RTL_ACT_BACKTRACE | RTL_ACT_ABORT)) &&
	                   (way == RTL_MECH_AUTO ||
	                    way == RTL_MECH_SWIZZLE);
	if (r->epoch_ns)
		e->any_epoch = 1;
	if (rt->choice.traps)
		e->any_traps = 1;
	if (rt->choice.traps && mech == RTL_MECH_SWIZZLE)
		e->any_swizzle_traps = 1;
	if (acts & (RTL_ACT_LOG | RTL_ACT_ABORT))
		e->names_early = 1;
}

int rtl_select_init(void)
{
	struct rtl_engine *e = &rtl_engine;
	const char *file = secure_getenv("RTL_CONFIG"), *rep = secure_getenv("RTL_REPORT");
	static struct rtl_policy_errors errs; /* 4 KiB: not on the stack */

	e->start_ns = rtl_now_ns();
	if (!file || !*file) {
		/* Preloaded with no policy: nothing is selected, the program
		 * runs as it would (rtlctl run passes @builtin instead). */
		e->policy.nrules = 0;
		return 0;
	}
	if (strcmp(file, RTL_CONFIG_BUILTIN) == 0) {
		rtl_policy_load_builtin(&e->policy);
	} else if (rtl_policy_load(file, &e->policy, &errs) < 0) {
		fputs(errs.text, stderr);
		fputs("rtl: bad policy; nothing selected\n", stderr);
		e->policy.nrules = 0;
		return -1;
	} else {
		rtl_engine_warn(&e->policy, file);
	}
	if (!rep)
		rep = e->policy.report;
	if (strlen(rep) >= sizeof(e->report))
		fputs("rtl: report path too long; no report\n", stderr);
	else
		strcpy(e->report, rep);
	e->needs_site = rtl_policy_needs_site(&e->policy);
	e->names_early = e->needs_site;
	for (int i = 0; i < e->policy.nrules; i++) {
		e->rules[i].r = &e->policy.rules[i];
		choose(&e->rules[i], i);
	}
	rtl_timeline_start(e->policy.nrules);
	return e->policy.nrules > 0 && e->policy.max_regions > 0;
}

int rtl_select_start(void)
{
	struct rtl_engine *e = &rtl_engine;
	uint64_t cap = e->policy.max_regions;

	if (cap > (1u << 22))
		cap = 1u << 22; /* 4M records; past that, selection stops */
	rtl_loader_start();     /* before a block can be selected, in any thread */
	if (rtl_site_init() < 0 || rtl_rec_init(cap) < 0 || rtl_trace_init() < 0)
		return -1;
	if (e->any_dirty)
		rtl_epoch_choose();
	if (e->any_alias && rtl_alias_init(e->any_slots, e->any_page, e->any_auto) < 0)
		return -1;
	/* Every system call on a region that can trap goes through rtl
	 * (docs/syscalls.md, "Every call"): the ranges are all known now. */
	if (e->any_traps && e->policy.syscalls == RTL_SYSCALLS_SECCOMP) {
		rtl_access_set_pin(rtl_heap_pin);
		if (rtl_sigsys_install(rtl_next()->sigaction) < 0)
			e->sigsys_failed = errno;
	}
	if (e->any_epoch && rtl_epoch_start() < 0)
		return -1;
	return 0;
}

uint64_t rtl_select_max_regions(void)
{
	return rtl_engine.policy.max_regions;
}

const struct rtl_choice *rtl_select(size_t size, const void *caller,
                                    uint32_t *site)
{
	struct rtl_engine *e = &rtl_engine;
	uint32_t cs = RTL_NO_SITE;
	int have_cs = 0, checked_libc = 0;

	count_allocation();
	for (int i = 0; i < e->policy.nrules; i++) {
		struct rtl_rule_rt *rt = &e->rules[i];
		const struct rtl_rule *r = rt->r;

		if (size < r->size_min || size > r->size_max)
			continue;
		if (!checked_libc) {
			/* libc's own blocks (stdio buffers, opendir's) are
			 * reached by libc's internal system calls, which no
			 * wrapper sees: never select them. */
			if (rtl_site_in_libc(caller)) {
				atomic_fetch_add_explicit(&rtl_totals.libc_skipped,
				                          1, memory_order_relaxed);
				return NULL;
			}
			checked_libc = 1;
		}
		if (r->site[0]) {
			if (!have_cs) {
				rtl_preload_busy++;
				cs = rtl_site_callsite(caller, 1);
				rtl_preload_busy--;
				have_cs = 1;
			}
			if (!rtl_site_accepts(cs, i))
				continue;
		}
		if (r->sample > 1 &&
		    atomic_fetch_add_explicit(&rt->matched, 1,
		                              memory_order_relaxed) %
		            r->sample)
			return NULL; /* first match wins, sampled out or not */
		if (rt->choice.mechanism == RTL_MECH_ALIAS && !rtl_alias_room()) {
			rtl_select_fallback(&rt->choice, RTL_FALLBACK_MAPS);
			return NULL;
		}
		if (!have_cs) {
			rtl_preload_busy++;
			cs = rtl_site_callsite(caller, e->names_early);
			rtl_preload_busy--;
		}
		*site = rtl_site_slot(cs, i);
		return &rt->choice;
	}
	return NULL;
}

void rtl_select_fallback(const struct rtl_choice *c, int why)
{
	(void)c;
	atomic_fetch_add_explicit(&rtl_totals.fallbacks[why], 1,
	                          memory_order_relaxed);
}

void rtl_select_report(int status)
{
	rtl_track_exit(status);
}

void rtl_select_forked(void)
{
	struct rtl_engine *e = &rtl_engine;

	for (int i = 0; i < e->policy.nrules; i++) {
		struct rtl_rule_rt *rt = &e->rules[i];
		atomic_store(&rt->read_traps, 0);
		atomic_store(&rt->write_traps, 0);
		atomic_store(&rt->false_sharing, 0);
		atomic_store(&rt->grants, 0);
		atomic_store(&rt->granted_bytes, 0);
		atomic_store(&rt->touched_bytes, 0);
		atomic_store(&rt->prot_changes, 0);
	}
	rtl_tally_reset();
	memset(&rtl_totals, 0, sizeof(rtl_totals));
	atomic_store(&rtl_totals.peak, rtl_heap_live());
	e->start_ns = rtl_now_ns();
	rtl_timeline_forked();
	rtl_rec_forked();
	rtl_site_forked();
	rtl_trace_forked();
	rtl_epoch_forked();
	rtl_fatal_forked();
}
