/* Dirty tracking's accounts and an epoch's work. A region written since its
 * twin was taken is diffed (swizzle: rtl's region_diff; alias: the
 * preload's own twin, taken in the fault handler before the first write)
 * when it is freed, at each epoch of its rule, and at exit; an epoch record
 * says how many regions were written, how many bytes differ, and the bytes
 * of the distinct 4 KiB pages that hold those changes (what a page-granular
 * tracker would have had to save). Beside them, what other write barriers
 * would rescan (Hosking & Moss, docs/compare.md): the written blocks whole
 * (object marking, remembered sets), the cards of 128, 512 and 4096 bytes
 * holding a changed byte (card marking), and on the kernel's written bits
 * the pages the kernel found written; per site too.
 *
 * Blocks on written bits (rec->wbits: a dirty rule whose write needs no
 * trap) never trap: each epoch asks region_dirty which were written.
 *
 * An epoch (rtl_epoch_tick, run by the timer's thread, epoch_timer.c)
 * re-applies each due rule's protection to the blocks that trapped since
 * its last epoch (reprotect.c: in runs of pages, never waiting for a trap)
 * and closes a dirty epoch. It and the callers here run outside signal
 * handlers, under the re-entrancy guard. */
#include "preload/engine/epoch.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/dirty/wbits.h"
#include "core/region/views.h"
#include "core/util/clock.h"
#include "core/util/lock.h"
#include "core/util/page.h"
#include <rtl/region.h>
#include "policy/policy.h"
#include "preload/engine/actions.h"
#include "preload/engine/engine.h"
#include "preload/engine/record.h"
#include "preload/engine/reprotect.h"
#include "preload/engine/select.h"
#include "preload/engine/site.h"
#include "preload/place/alias.h"
#include "preload/place/page.h"
#include "preload/shim/next.h"

#define PAGE rtl_page_size()
#define SET_CAP (1u << 16)  /* distinct pages per epoch, deduplicated */
#define CARD_CAP (1u << 18) /* distinct cards per size and epoch */
#define MAX_EPOCHS 4096

static struct rtl_lock acc_lock = RTL_LOCK_INIT;
static uint64_t acc_regions, acc_diff, acc_pages, acc_objects, acc_written;
static uint64_t acc_cards[RTL_CARDS];
static uint64_t epoch_ns; /* the ticks' own time: scans, diffs, re-arming */
static uintptr_t *pageset;
static uint32_t npageset;

/* The cards of each size that hold a changed byte this epoch: open
 * addressing, each entry the card's number + 1 with the epoch's
 * generation in its top 16 bits (an entry of another generation is
 * empty), so a new epoch clears nothing. */
static const unsigned card_shift[RTL_CARDS] = { 7, 9, 12 };
#define WRITTEN_SET RTL_CARDS /* the pages found written, in the same sets */
static uint64_t *cardset[RTL_CARDS + 1];
static uint32_t ncards[RTL_CARDS + 1];
static uint64_t card_gen = 1;
static struct rtl_site_stats *acc_site; /* the block being accounted */
/* A block on written bits freed between two scans: its pages the kernel
 * would have found written are those its changes lie on. */
static int acc_freeing_wbits;
static struct rtl_epoch list[MAX_EPOCHS];
static size_t nlist;
static uint64_t dropped;

/* A page with a changed byte: counted once per epoch (acc_lock held). */
static void add_page(uintptr_t page)
{
	uint32_t h;

	if (!pageset) {
		void *p = mmap(NULL, SET_CAP * sizeof(*pageset),
		               PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED) {
			acc_pages += PAGE;
			return;
		}
		pageset = p;
	}
	if (npageset >= SET_CAP / 2) { /* full enough: count, do not dedupe */
		acc_pages += PAGE;
		return;
	}
	h = (uint32_t)((page * 0x9e3779b97f4a7c15ull) >> 40);
	for (;; h++) {
		uintptr_t *slot = &pageset[h & (SET_CAP - 1)];
		if (*slot == page + 1)
			return;
		if (!*slot) {
			*slot = page + 1;
			npageset++;
			acc_pages += PAGE;
			return;
		}
	}
}

/* Whether c enters set k this epoch (a set filled half counts everything
 * as new: no dedupe). acc_lock held. */
static int set_add(int k, uint64_t c)
{
	uint64_t want = card_gen << 48 | (c + 1), *set;
	uint32_t h;

	if (!cardset[k]) {
		void *p = mmap(NULL, CARD_CAP * sizeof(uint64_t), PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			return 1;
		cardset[k] = p;
	}
	if (ncards[k] >= CARD_CAP / 2)
		return 1;
	set = cardset[k];
	for (h = (uint32_t)((c * 0x9e3779b97f4a7c15ull) >> 40);; h++) {
		uint64_t *slot = &set[h & (CARD_CAP - 1)];

		if (*slot == want)
			return 0;
		if (*slot >> 48 != card_gen) {
			*slot = want;
			ncards[k]++;
			return 1;
		}
	}
}

/* Card c of size k holds a changed byte: counted once per epoch, for the
 * run and for the site of the first block that changed it (acc_lock
 * held). */
static void add_card(int k, uint64_t c)
{
	if (!set_add(k, c))
		return;
	acc_cards[k] += 1ull << card_shift[k];
	if (acc_site)
		acc_site->card_bytes[k] += 1ull << card_shift[k];
}

/* Page p (of the RW view) found written, once per epoch (acc_lock held). */
static void add_written(uintptr_t p)
{
	if (set_add(WRITTEN_SET, p))
		acc_written += PAGE;
}

/* The kernel's scan found pages [lo, hi) of the views' offsets written
 * (rtl_wbits_observe: under region_dirty, in harvest below). */
static void pages_found(void *ctx, uint64_t lo, uint64_t hi)
{
	uintptr_t base = rtl_view_base(RTL_VIEW_RW);

	(void)ctx;
	rtl_lock_acquire(&acc_lock);
	for (uint64_t off = lo; off < hi; off += PAGE)
		add_written((base + off) / PAGE);
	rtl_lock_release(&acc_lock);
}

static void add_run(uintptr_t at, size_t len)
{
	acc_diff += len;
	if (acc_site)
		acc_site->diff_bytes += len;
	for (uintptr_t p = at / PAGE; acc_freeing_wbits && p <= (at + len - 1) / PAGE; p++)
		add_written(p);
	for (uintptr_t p = at / PAGE; p <= (at + len - 1) / PAGE; p++)
		add_page(p);
	for (int k = 0; k < RTL_CARDS; k++)
		for (uint64_t c = at >> card_shift[k]; c <= (at + len - 1) >> card_shift[k]; c++)
			add_card(k, c);
}

/* Alias: the runs where the object differs from its twin. */
static void diff_twin(const struct rtl_rec *rec)
{
	const unsigned char *now = rec->rw, *was = rec->twin;
	size_t i = 0, n = rec->size;

	while (i < n) {
		size_t start;

		while (i + 8 <= n && !memcmp(now + i, was + i, 8))
			i += 8;
		while (i < n && now[i] == was[i])
			i++;
		if (i >= n)
			break;
		start = i;
		while (i < n && now[i] != was[i])
			i++;
		add_run((uintptr_t)now + start, i - start);
	}
}

/* Swizzle: rtl's own diff against the twin it took at the first write. */
static void diff_region(const struct rtl_rec *rec)
{
	rtl_run_t small[64], *runs = small;
	ssize_t n = region_diff(rec->rw, NULL, 0);

	if (n <= 0)
		return;
	if (n > 64 && !(runs = malloc((size_t)n * sizeof(*runs))))
		return;
	n = region_diff(rec->rw, runs, (size_t)n);
	for (ssize_t i = 0; i < n; i++)
		add_run((uintptr_t)rec->rw + runs[i].offset, runs[i].len);
	if (runs != small)
		free(runs);
}

/* rec was written since its twin was taken: account its diff. A page
 * block's writes are the page's (rtl_epoch_page_written). freeing_wbits:
 * a block on written bits freed between two scans. */
static void account(struct rtl_rec *rec, int freeing_wbits)
{
	int region = 0;

	if (!atomic_exchange(&rec->written, 0) || rec->mech == RTL_MECH_PAGE)
		return;
	rtl_lock_acquire(&acc_lock);
	acc_regions++;
	acc_objects += rec->size;
	acc_freeing_wbits = freeing_wbits;
	acc_site = rtl_site_stats(rec->site, NULL, NULL);
	acc_site->dirty_regions++;
	acc_site->object_bytes += rec->size;
	if (rec->alias) { /* alias, or auto in a slot: the preload's twin */
		if (rec->twin)
			diff_twin(rec);
	} else {
		diff_region(rec);
		region = 1;
	}
	acc_site = NULL;
	acc_freeing_wbits = 0;
	rtl_lock_release(&acc_lock);
	/* rtl's twin becomes the contents now, as the preload's does at the
	 * next first write: else every later epoch would count these changes
	 * again. */
	if (region && atomic_load(&rec->live))
		region_checkpoint(rec->rw);
}

void rtl_epoch_page_written(const unsigned char *now,
                            const unsigned char *was, size_t len)
{
	size_t i = 0;

	rtl_lock_acquire(&acc_lock);
	acc_regions++;
	add_page((uintptr_t)now / PAGE); /* written: a page tracker saves it */
	while (i < len) {
		size_t start;

		while (i < len && now[i] == was[i])
			i++;
		start = i;
		while (i < len && now[i] != was[i])
			i++;
		acc_diff += i - start;
		/* The cards, by the page copy's own addresses. */
		for (int k = 0; k < RTL_CARDS && i > start; k++)
			for (uint64_t c = ((uintptr_t)now + start) >> card_shift[k];
			     c <= ((uintptr_t)now + i - 1) >> card_shift[k]; c++)
				add_card(k, c);
	}
	rtl_lock_release(&acc_lock);
}

/* A block on written bits changed since its checkpoint (asked of it alone,
 * not of the kernel's scan of every block). */
static void written_alone(struct rtl_rec *rec)
{
	if (rec->wbits && region_diff(rec->rw, NULL, 0) > 0)
		atomic_store(&rec->written, 1);
}

/* The blocks on written bits written since their mark was reset
 * (region_dirty: the kernel's scan, then a compare of the blocks on written
 * pages; pages_found hears of the pages). Outside the acc_lock. */
static void harvest(void)
{
	static void **bases;
	static size_t cap;
	size_t n;

	if (!rtl_engine.any_wbits)
		return;
	for (;;) {
		n = region_dirty(bases, cap, 1);
		for (size_t i = 0; i < n && i < cap; i++) {
			struct region_info info;

			if (region_find(bases[i], &info) == 0 && info.data)
				atomic_store(&((struct rtl_rec *)info.data)->written, 1);
		}
		if (n <= cap)
			break;
		/* More than fit: a larger list (the marks of those filled in
		 * are reset; the rest are asked again). */
		void *p = mmap(NULL, 2 * n * sizeof(*bases), PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			break;
		if (bases)
			munmap(bases, cap * sizeof(*bases));
		bases = p;
		cap = 2 * n;
	}
}

void rtl_epoch_freeing(struct rtl_rec *rec)
{
	if (!rtl_engine.rules[rec->rule].choice.track)
		return;
	written_alone(rec);
	account(rec, rec->wbits);
}

void rtl_epoch_choose(void)
{
	struct rtl_engine *e = &rtl_engine;
	const char *why = NULL;
	int want = 0, wb;

	for (int i = 0; i < e->policy.nrules; i++)
		want |= e->rules[i].choice.wbits;
	if (!want) {
		e->dirty_why = "each dirty rule has an action that must see the "
		               "write (count, log, backtrace, abort), protect = none, "
		               "or a mechanism whose blocks lie outside rtl's views";
		return;
	}
	wb = region_dirty_backend(&why) == RTL_DIRTY_WRITTEN_BITS;
	e->dirty_why = why;
	if (wb)
		rtl_wbits_observe(pages_found, NULL);
	for (int i = 0; i < e->policy.nrules; i++) {
		if (!wb)
			e->rules[i].choice.wbits = 0;
		if (e->rules[i].choice.wbits)
			e->any_wbits = 1;
	}
}

/* Close the epoch: its record, and the counts start again. */
static void push(void)
{
	rtl_lock_acquire(&acc_lock);
	if (nlist < MAX_EPOCHS)
		list[nlist++] = (struct rtl_epoch){
			rtl_now_ns() - rtl_engine.start_ns,
			acc_regions,
			acc_diff,
			acc_pages,
			acc_objects,
			{ acc_cards[0], acc_cards[1], acc_cards[2] },
			acc_written,
		};
	else
		dropped++;
	acc_regions = acc_diff = acc_pages = acc_objects = acc_written = 0;
	memset(acc_cards, 0, sizeof(acc_cards));
	memset(ncards, 0, sizeof(ncards));
	if (++card_gen == 1 << 16) { /* wrapped: old entries would look new */
		card_gen = 1;
		for (int k = 0; k < RTL_CARDS; k++)
			if (cardset[k])
				memset(cardset[k], 0, CARD_CAP * sizeof(uint64_t));
		if (cardset[WRITTEN_SET])
			memset(cardset[WRITTEN_SET], 0, CARD_CAP * sizeof(uint64_t));
	}
	if (pageset && npageset)
		memset(pageset, 0, SET_CAP * sizeof(*pageset));
	npageset = 0;
	rtl_lock_release(&acc_lock);
}

void rtl_epoch_final(void)
{
	if (!rtl_engine.any_dirty)
		return;
	harvest();
	for (uint32_t i = 0; i < rtl_rec_count(); i++) {
		struct rtl_rec *rec = rtl_rec_at(i);

		if (!atomic_load(&rec->live) ||
		    !rtl_engine.rules[rec->rule].choice.track)
			continue;
		if (rec->alias) {
			rtl_rec_lock(rec);
			account(rec, 0);
			rtl_rec_unlock(rec);
		} else {
			account(rec, 0);
		}
	}
	if (rtl_engine.any_page)
		rtl_pageprot_diff(0);
	push();
}

size_t rtl_epoch_list(const struct rtl_epoch **out, uint64_t *drop)
{
	*out = list;
	*drop = dropped;
	return nlist;
}

/* ---- an epoch's work (epoch_timer.c calls it) ---- */

/* A block the epoch set again (or found unchanged): its diff, if its rule
 * tracks writes. Under its lock if free (a trap holding it notes it for the
 * next epoch, which diffs it then). */
static void account_noted(struct rtl_rec *rec)
{
	if (!rtl_engine.rules[rec->rule].choice.track)
		return;
	if (!rec->alias) {
		account(rec, 0); /* in place: rtl's own twin and diff */
		return;
	}
	if (rtl_rec_trylock(rec) < 0) {
		rtl_reprotect_note(rec);
		return;
	}
	if (atomic_load(&rec->live)) {
		account(rec, 0);
		/* Granted again since the epoch's call: its next writes do not
		 * trap, so its twin is taken now and the next epoch diffs it. */
		if (rec->twin && (atomic_load(&rec->prot) & PROT_WRITE)) {
			memcpy(rec->twin, rec->rw, rec->size);
			atomic_store(&rec->written, 1);
			rtl_reprotect_note(rec);
		}
	}
	rtl_rec_unlock(rec);
}

void rtl_epoch_tick(uint64_t due_mask, struct rtl_reprotect_stats *st)
{
	uint64_t t0 = rtl_now_ns();
	int dirty = 0, wbits = 0;

	*st = (struct rtl_reprotect_stats){ 0, 0 };

	for (int i = 0; i < rtl_engine.policy.nrules; i++)
		if (((due_mask >> i) & 1) && rtl_engine.rules[i].choice.track) {
			dirty = 1;
			wbits |= rtl_engine.rules[i].choice.wbits;
		}
	if (wbits)
		harvest();
	for (int i = 0; i < rtl_engine.policy.nrules; i++) {
		const struct rtl_choice *c = &rtl_engine.rules[i].choice;

		if (!((due_mask >> i) & 1) || c->mechanism == RTL_MECH_SWIZZLE)
			continue;
		if (c->mechanism == RTL_MECH_PAGE)
			rtl_reprotect_pages(i, c->prot, st);
		else
			rtl_reprotect_rule(i, c->prot, account_noted, st);
	}
	/* Blocks on written bits never trap: each is asked (harvest marked
	 * those the kernel found written). */
	for (uint32_t i = 0; wbits && i < rtl_rec_count(); i++) {
		struct rtl_rec *rec = rtl_rec_at(i);

		if (atomic_load(&rec->live) && rec->wbits && ((due_mask >> rec->rule) & 1))
			account(rec, 0);
	}
	if (dirty && rtl_engine.any_page)
		rtl_pageprot_diff(1);
	epoch_ns += rtl_now_ns() - t0;
	if (dirty)
		push();
}

uint64_t rtl_epoch_time_ns(void)
{
	return epoch_ns;
}

void rtl_epoch_forked(void)
{
	rtl_lock_reset(&acc_lock); /* its holder did not come along */
	nlist = 0;
	dropped = 0;
	acc_regions = acc_diff = acc_pages = acc_objects = acc_written = 0;
	memset(acc_cards, 0, sizeof(acc_cards));
	epoch_ns = 0;
	if (pageset && npageset)
		memset(pageset, 0, SET_CAP * sizeof(*pageset));
	npageset = 0;
	rtl_epoch_timer_forked();
}
