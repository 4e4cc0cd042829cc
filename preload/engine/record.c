/* One record per selected allocation: its rule, site, size, where it lives
 * and its trap counts. Records come from one mmap'ed pool (never unmapped,
 * so a signal handler may read any of them) with a lock-free free list; a
 * record freed with traps is offered to a small table of the regions with
 * the most traps, for the report. No malloc here. */
#include "record.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lock.h"

#define TOP 20

static struct rtl_rec *recs;
static uint32_t cap;
static _Atomic uint32_t used;      /* records ever handed out */
static _Atomic uint64_t free_head; /* tag << 32 | index + 1 */

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

struct rtl_rec *rtl_rec_new(void)
{
	uint64_t h = atomic_load_explicit(&free_head, memory_order_acquire);
	struct rtl_rec *rec = NULL;
	uint32_t i;

	if (!recs)
		return NULL;
	while ((uint32_t)h) {
		/* A popped record is never unmapped: reading its link is safe
		 * even if another thread took it meanwhile (the tag then makes
		 * the exchange fail). */
		uint32_t idx = (uint32_t)h - 1;
		uint64_t next = atomic_load_explicit(&recs[idx].next,
		                                     memory_order_relaxed);
		uint64_t nh = ((h >> 32) + 1) << 32 | next;
		if (atomic_compare_exchange_weak(&free_head, &h, nh)) {
			rec = &recs[idx];
			break;
		}
	}
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
	rtl_lock_reset(&rec->lock);
	rec->alias = 0;
	rec->pages = 0;
	rec->twin = NULL;
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
		top[at] = (struct rtl_top){ rec->site, rec->size, r, w };
	rtl_lock_release(&top_lock);
}

void rtl_rec_free(struct rtl_rec *rec)
{
	uint32_t idx = rtl_rec_index(rec);
	uint64_t h, nh;

	offer(rec);
	atomic_store_explicit(&rec->live, 0, memory_order_release);
	h = atomic_load(&free_head);
	do {
		atomic_store_explicit(&rec->next, (uint32_t)h, memory_order_relaxed);
		nh = ((h >> 32) + 1) << 32 | (idx + 1);
	} while (!atomic_compare_exchange_weak(&free_head, &h, nh));
}

void rtl_rec_lock(struct rtl_rec *rec)
{
	rtl_lock_acquire(&rec->lock);
}

void rtl_rec_unlock(struct rtl_rec *rec)
{
	rtl_lock_release(&rec->lock);
}

static int by_traps(const void *a, const void *b)
{
	const struct rtl_top *x = a, *y = b;
	uint32_t tx = traps_of(x->read_traps, x->write_traps);
	uint32_t ty = traps_of(y->read_traps, y->write_traps);
	return tx < ty ? 1 : tx > ty ? -1 : 0;
}

/* The freed records' best, and the live ones better than the worst kept. */
size_t rtl_rec_top(struct rtl_top *out, size_t max)
{
	struct rtl_top all[2 * TOP];
	size_t n = 0;

	rtl_lock_acquire(&top_lock);
	memcpy(all, top, (size_t)ntop * sizeof(*top));
	n = (size_t)ntop;
	rtl_lock_release(&top_lock);
	for (uint32_t i = 0; i < rtl_rec_count(); i++) {
		const struct rtl_rec *rec = &recs[i];
		uint32_t r, w;

		if (!atomic_load(&rec->live))
			continue;
		r = atomic_load(&rec->read_traps);
		w = atomic_load(&rec->write_traps);
		if (!r && !w)
			continue;
		if (n == 2 * TOP) { /* keep the best 2*TOP so far */
			qsort(all, n, sizeof(*all), by_traps);
			n = TOP;
		}
		all[n++] = (struct rtl_top){ rec->site, rec->size, r, w };
	}
	qsort(all, n, sizeof(*all), by_traps);
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof(*out));
	return n;
}

void rtl_rec_forked(void)
{
	ntop = 0;
	rtl_lock_reset(&top_lock);
	for (uint32_t i = 0; i < rtl_rec_count(); i++) {
		atomic_store(&recs[i].read_traps, 0);
		atomic_store(&recs[i].write_traps, 0);
		rtl_lock_reset(&recs[i].lock); /* its holder did not come */
	}
}
