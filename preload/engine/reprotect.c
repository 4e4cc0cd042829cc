/* An epoch's protection again. The trap path notes each block of a rule
 * with an epoch as it traps (a lock-free list per rule, through the
 * record's queued link); the epoch thread takes the list whole, lowers the
 * noted blocks' recorded protection under their locks (taken only if
 * free: a trap in progress keeps its block for the next epoch), then sets
 * the pages with one call of the protection backend per run of adjacent
 * pages, with no lock held. A block one epoch sees again was trapped
 * again since: the list holds what changed, so an epoch costs what the
 * program's traps since the last cost, not what it keeps live.
 *
 * Between the recorded protection and the call, a block may be freed and
 * its pages taken by another (the call then lowers the newcomer's pages):
 * the fault path trusts the record, and sets pages that refused an access
 * their record allows to the record's protection again (alias.c, page.c).
 *
 * rtl_reprotect_note runs in signal handlers; the rest in the epoch thread
 * (malloc is glibc's there). */
#include "preload/engine/reprotect.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <rtl/region.h>
#include "core/prot/prot.h"
#include "core/util/page.h"
#include "core/util/relax.h"
#include "policy/policy.h"
#include "preload/engine/actions.h"
#include "preload/engine/engine.h"
#include "preload/place/alias.h"
#include "preload/place/page.h"

#define PAGE rtl_page_size()

/* Per rule, the noted blocks: the first one's index + 1, 0 for none. */
static _Atomic uint32_t noted[RTL_POLICY_MAX_RULES];

/* Non-zero from the first record an epoch lowers to its last call: a
 * block pinned meanwhile for a system call may have been lowered before
 * its pin, and its call not made yet (rtl_reprotect_wait). */
static _Atomic int lowering;

void rtl_reprotect_lowering(int on)
{
	atomic_store_explicit(&lowering, on, on ? memory_order_seq_cst : memory_order_release);
}

void rtl_reprotect_wait(void)
{
	while (atomic_load_explicit(&lowering, memory_order_acquire))
		rtl_cpu_relax();
}

void rtl_reprotect_note(struct rtl_rec *rec)
{
	_Atomic uint32_t *list = &noted[rec->rule];
	uint32_t none = 0, head;

	if (!rtl_engine.rules[rec->rule].r->epoch_ns)
		return;
	/* Claimed by this thread, or on a list already. */
	if (!atomic_compare_exchange_strong_explicit(&rec->queued, &none, RTL_REC_LAST,
	                                             memory_order_acq_rel,
	                                             memory_order_relaxed))
		return;
	head = atomic_load_explicit(list, memory_order_relaxed);
	do
		atomic_store_explicit(&rec->queued, head ? head : RTL_REC_LAST,
		                      memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(list, &head, rtl_rec_index(rec) + 1,
	                                              memory_order_release,
	                                              memory_order_relaxed));
}

/* ---- runs of pages ---- */

struct span {
	uintptr_t at;
	size_t len;
	struct rtl_rec *rec; /* NULL: pages of the page mechanism */
};

static struct span *spans;
static size_t nspans, cap;

static void add(uintptr_t at, size_t len, struct rtl_rec *rec)
{
	if (nspans == cap) {
		size_t n = cap ? 2 * cap : 1024;
		struct span *s = realloc(spans, n * sizeof(*s));

		if (!s)
			return; /* not set this epoch: the next sets it */
		spans = s;
		cap = n;
	}
	spans[nspans++] = (struct span){ at, len, rec };
}

static int by_address(const void *a, const void *b)
{
	uintptr_t x = ((const struct span *)a)->at, y = ((const struct span *)b)->at;

	return x < y ? -1 : x > y;
}

/* Whether the pages between two spans of one epoch's run may join it: for
 * rule's blocks (rule >= 0), free pages of one copy or blocks of the rule
 * at prot already (alias.c); for the page mechanism's pages (rule < 0),
 * pages at prot already (page.c). */
static int bridge(uintptr_t lo, uintptr_t hi, int rule, int prot)
{
	return rule >= 0 ? rtl_alias_bridge(lo, hi, rule, prot)
	                 : rtl_pageprot_bridge(lo, hi, prot);
}

/* Each run of spans in one call: adjacent ones, and those whose gap may
 * join them (a call's cost is mostly the other CPUs' TLBs it flushes, not
 * its pages); a run the kernel refuses (out of mappings, under mprotect)
 * block by block, as a grant would be. */
static void set_runs(int rule, int prot, struct rtl_reprotect_stats *st)
{
	qsort(spans, nspans, sizeof(*spans), by_address);
	for (size_t i = 0, j; i < nspans; i = j) {
		uintptr_t end = spans[i].at + spans[i].len;

		for (j = i + 1; j < nspans && (spans[j].at <= end ||
		                               bridge(end, spans[j].at, rule, prot));
		     j++)
			if (spans[j].at + spans[j].len > end)
				end = spans[j].at + spans[j].len;
		st->calls++;
		if (rtl_prot_set(spans[i].at, end - spans[i].at, prot) == 0)
			continue;
		for (size_t k = i; k < j; k++) {
			struct rtl_rec *rec = spans[k].rec;

			if (!rec || rtl_rec_trylock(rec) < 0)
				continue;
			if (atomic_load(&rec->live))
				rtl_alias_protect(rec, atomic_load(&rec->prot));
			rtl_rec_unlock(rec);
		}
	}
	nspans = 0;
}

/* ---- the noted blocks ---- */

/* For the next epoch: pinned, or a trap holds it now. */
static void again(struct rtl_rec *rec)
{
	rtl_reprotect_note(rec);
}

/* An auto block protected in place (the mprotect backend's blocks of whole
 * pages): its home pages by region_protect, a call of its own. */
static void in_place(struct rtl_rec *rec, int prot, struct rtl_reprotect_stats *st)
{
	struct region_info r;

	if (region_find((void *)rec->addr, &r) == 0 && r.prot != prot &&
	    region_protect(rec->rw, prot) == 0) {
		rtl_act_prot_changed(rec->rule);
		st->blocks++;
		st->calls++;
	}
}

/* A tag block: its granules retagged, no system call. */
static void tagged(struct rtl_rec *rec, int prot, struct rtl_reprotect_stats *st)
{
	struct region_info r;

	if (region_find((void *)rec->addr, &r) == 0 && r.prot != prot &&
	    region_protect((void *)rec->addr, prot) == 0) {
		rtl_act_prot_changed(rec->rule);
		st->blocks++;
	}
}

void rtl_reprotect_rule(int rule, int prot, void (*done)(struct rtl_rec *),
                        struct rtl_reprotect_stats *st)
{
	uint32_t h = atomic_exchange_explicit(&noted[rule], 0, memory_order_acquire);
	struct rtl_rec **seen = NULL;
	size_t nseen = 0, seen_cap = 0;

	/* Before any record is looked at under its lock: a pin taken after
	 * that look waits for the calls below. */
	rtl_reprotect_lowering(1);
	while (h && h != RTL_REC_LAST) {
		struct rtl_rec *rec = rtl_rec_at(h - 1);

		h = atomic_load_explicit(&rec->queued, memory_order_acquire);
		atomic_store_explicit(&rec->queued, 0, memory_order_release);
		if (!atomic_load(&rec->live) || rec->rule != rule ||
		    rec->mech == RTL_MECH_SWIZZLE || rec->mech == RTL_MECH_PAGE)
			continue;
		if (atomic_load_explicit(&rec->pins, memory_order_acquire) ||
		    rtl_rec_trylock(rec) < 0) {
			again(rec);
			continue;
		}
		if (!atomic_load(&rec->live) || atomic_load(&rec->pins)) {
			rtl_rec_unlock(rec);
			if (atomic_load(&rec->live))
				again(rec);
			continue;
		}
		if (rec->mech == RTL_MECH_TAG) {
			tagged(rec, prot, st);
		} else if (!rec->alias) {
			/* region_protect: the region's own lock and the call, a
			 * block at a time (mprotect backend only). */
			if (atomic_load(&rec->in_place) == RTL_REC_IN_PLACE)
				in_place(rec, prot, st);
		} else if (atomic_load(&rec->prot) != prot &&
		           atomic_load(&rec->in_place) != RTL_REC_PROGRAMS) {
			/* Lower the record first: a trap from here on finds it
			 * lowered, and the call follows. */
			atomic_store_explicit(&rec->prot, prot, memory_order_release);
			rtl_alias_protected(rec, prot);
			add(rec->alias, (size_t)rec->pages * PAGE, rec);
			rtl_act_prot_changed(rec->rule);
			st->blocks++;
		}
		rtl_rec_unlock(rec);
		if (!done)
			continue;
		if (nseen == seen_cap) {
			size_t n = seen_cap ? 2 * seen_cap : 256;
			struct rtl_rec **s = realloc(seen, n * sizeof(*s));

			if (!s) {
				again(rec);
				continue;
			}
			seen = s;
			seen_cap = n;
		}
		seen[nseen++] = rec;
	}
	set_runs(rule, prot, st);
	rtl_reprotect_lowering(0);
	/* The accounts after the calls: a write from here on traps. */
	for (size_t i = 0; i < nseen; i++)
		done(seen[i]);
	free(seen);
}

void rtl_reprotect_pages(int rule, int prot, struct rtl_reprotect_stats *st)
{
	rtl_reprotect_lowering(1);
	for (uint32_t i = 0; i < rtl_rec_count(); i++) {
		struct rtl_rec *rec = rtl_rec_at(i);
		size_t pages;

		if (!atomic_load(&rec->live) || rec->mech != RTL_MECH_PAGE ||
		    rec->rule != rule || atomic_load(&rec->pins))
			continue;
		atomic_store(&rec->prot, prot);
		pages = rtl_pageprot_lower(rec, prot, add);
		if (pages) {
			rtl_act_prot_changed(rule);
			st->blocks++;
		}
	}
	set_runs(-1, prot, st);
	rtl_reprotect_lowering(0);
}
