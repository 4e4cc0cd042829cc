/* One record per selected allocation: its rule, site, size, where it lives
 * and its trap counts. Records come from one mmap'ed pool (never unmapped,
 * so a signal handler may read any of them) with lock-free free lists, one
 * per allocation stripe (tally.h): a thread takes from and gives back to its
 * own, so threads on different cores do not fight over one list head and
 * each reuses the records it touched last. It takes from the others only
 * when its own is empty, before growing the pool; a
 * record freed with traps is offered to a small table of the regions with
 * the most traps, for the report. No malloc here. */
#include "preload/engine/record.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "core/util/lock.h"
#include "preload/engine/tally.h"

#define TOP 20

static struct rtl_rec *recs;
static uint32_t cap;
static _Atomic uint32_t used; /* records ever handed out */
static struct free_list {
	_Atomic uint64_t head;                         /* tag << 32 | index + 1 */
} __attribute__((aligned(64))) free_list[RTL_STRIPES]; /* a line each */
_Static_assert(sizeof(struct free_list) == 64, "a free list head per cache line");

static struct rtl_top top[TOP];
static int ntop;
static struct rtl_lock top_lock = RTL_LOCK_INIT;

int rtl_rec_init(uint64_t n)
{
	void *p;

	if (recs)
		return 0;
	p = mmap(NULL, n * sizeof(*recs), PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	recs = p;
	cap = (uint32_t)n;
	return 0;
}

struct rtl_rec *rtl_rec_at(uint32_t index)
{
	return index < cap ? &recs[index] : NULL;
}

uint32_t rtl_rec_index(const struct rtl_rec *rec)
{
	return (uint32_t)(rec - recs);
}

uint32_t rtl_rec_count(void)
{
	uint32_t n = atomic_load_explicit(&used, memory_order_acquire);
	return n < cap ? n : cap;
}

static struct rtl_rec *pop(_Atomic uint64_t *head)
{
	uint64_t h = atomic_load_explicit(head, memory_order_acquire);

	while ((uint32_t)h) {
		/* A popped record is never unmapped: reading its link is safe
		 * even if another thread took it meanwhile (the tag then makes
		 * the exchange fail). */
		uint32_t idx = (uint32_t)h - 1;
		uint64_t next = atomic_load_explicit(&recs[idx].next,
		                                     memory_order_relaxed);
		uint64_t nh = ((h >> 32) + 1) << 32 | next;
		if (atomic_compare_exchange_weak(head, &h, nh))
			return &recs[idx];
	}
	return NULL;
}

struct rtl_rec *rtl_rec_new(void)
{
	unsigned mine = rtl_stripe_index();
	struct rtl_rec *rec = NULL;
	uint32_t i;

	if (!recs)
		return NULL;
	for (unsigned k = 0; k < RTL_STRIPES && !rec; k++)
		rec = pop(&free_list[(mine + k) % RTL_STRIPES].head);
	if (!rec) {
		i = atomic_fetch_add(&used, 1);
		if (i >= cap) {
			atomic_fetch_sub(&used, 1);
			errno = ENOSPC;
			return NULL;
		}
		rec = &recs[i];
	}
	atomic_store_explicit(&rec->read_traps, 0, memory_order_relaxed);
	atomic_store_explicit(&rec->write_traps, 0, memory_order_relaxed);
	atomic_store_explicit(&rec->written, 0, memory_order_relaxed);
	atomic_store_explicit(&rec->touched, 0, memory_order_relaxed);
	rtl_lock_reset(&rec->lock);
	rec->alias = 0;
	rec->pages = 0;
	rec->twin = NULL;
	rec->wbits = 0;
	return rec;
}

static uint32_t traps_of(uint32_t r, uint32_t w)
{
	return r + w;
}

/* Offer a freed record's counts to the top table. */
static void offer(const struct rtl_rec *rec)
{
	uint32_t r = atomic_load(&rec->read_traps), w = atomic_load(&rec->write_traps);
	int at = -1;

	if (!r && !w)
		return;
	rtl_lock_acquire(&top_lock);
	if (ntop < TOP) {
		at = ntop++;
	} else {
		at = 0;
		for (int i = 1; i < TOP; i++)
			if (traps_of(top[i].read_traps, top[i].write_traps) <
			    traps_of(top[at].read_traps, top[at].write_traps))
				at = i;
		if (traps_of(top[at].read_traps, top[at].write_traps) >= r + w)
			at = -1;
	}
	if (at >= 0)
		top[at] = (struct rtl_top){ rec->site, rec->size, r, w, rec->addr,
			                    rec->rule };
	rtl_lock_release(&top_lock);
}

void rtl_rec_free(struct rtl_rec *rec)
{
	_Atomic uint64_t *head = &free_list[rtl_stripe_index()].head;
	uint32_t idx = rtl_rec_index(rec);
	uint64_t h, nh;

	offer(rec);
	atomic_store_explicit(&rec->live, 0, memory_order_release);
	h = atomic_load(head);
	do {
		atomic_store_explicit(&rec->next, (uint32_t)h, memory_order_relaxed);
		nh = ((h >> 32) + 1) << 32 | (idx + 1);
	} while (!atomic_compare_exchange_weak(head, &h, nh));
}

void rtl_rec_lock(struct rtl_rec *rec)
{
	rtl_lock_acquire(&rec->lock);
}

int rtl_rec_trylock(struct rtl_rec *rec)
{
	return rtl_lock_try(&rec->lock);
}

void rtl_rec_unlock(struct rtl_rec *rec)
{
	rtl_lock_release(&rec->lock);
}

/* Keep r in best[], the max regions with the most traps so far (*n of
 * them): it replaces the one with the fewest if it has more. */
static void keep(struct rtl_top *best, size_t *n, size_t max,
                 const struct rtl_top *r)
{
	size_t worst = 0;

	if (*n < max) {
		best[(*n)++] = *r;
		return;
	}
	for (size_t i = 1; i < *n; i++)
		if (traps_of(best[i].read_traps, best[i].write_traps) <
		    traps_of(best[worst].read_traps, best[worst].write_traps))
			worst = i;
	if (traps_of(r->read_traps, r->write_traps) >
	    traps_of(best[worst].read_traps, best[worst].write_traps))
		best[worst] = *r;
}

/* The freed records' best and the live ones', unsorted (rtlctl sorts).
 * Signal-safe: no qsort (it may allocate), the table's lock only. */
size_t rtl_rec_top(struct rtl_top *out, size_t max)
{
	size_t n = 0;

	if (rtl_lock_acquire(&top_lock) == 0) {
		for (int i = 0; i < ntop; i++)
			keep(out, &n, max, &top[i]);
		rtl_lock_release(&top_lock);
	}
	for (uint32_t i = 0; i < rtl_rec_count(); i++) {
		const struct rtl_rec *rec = &recs[i];
		struct rtl_top t;

		if (!atomic_load(&rec->live))
			continue;
		t = (struct rtl_top){ rec->site, rec->size,
			              atomic_load(&rec->read_traps),
			              atomic_load(&rec->write_traps), rec->addr,
			              rec->rule };
		if (t.read_traps || t.write_traps)
			keep(out, &n, max, &t);
	}
	return n;
}

void rtl_rec_forked(void)
{
	ntop = 0;
	rtl_lock_reset(&top_lock);
	/* Read before written: a record the child need not change stays
	 * shared with the parent's page (a write would copy it). */
	for (uint32_t i = 0; i < rtl_rec_count(); i++) {
		struct rtl_rec *r = &recs[i];

		if (atomic_load_explicit(&r->read_traps, memory_order_relaxed))
			atomic_store(&r->read_traps, 0);
		if (atomic_load_explicit(&r->write_traps, memory_order_relaxed))
			atomic_store(&r->write_traps, 0);
		if (atomic_load_explicit(&r->lock.owner, memory_order_relaxed))
			rtl_lock_reset(&r->lock); /* its holder did not come */
	}
}
