/* DIRTY: which tracked regions were written, with TreadMarks' lazy twins
 * (a write trap takes the twin) or with the kernel's written bits (the twin
 * is taken at the checkpoint, and region_dirty asks the kernel which pages
 * were written since: wbits.c): region_track, region_dirty,
 * region_checkpoint and the hooks the trap path and region_protect call.
 * The hooks run in a signal handler: they take only the region's spin lock
 * and memcpy into twin storage allocated beforehand; never malloc or a
 * mutex there, and never a system call of the written bits. */
#include <errno.h>
#include <string.h>

#include "core/dirty/dirty.h"
#include "core/tag/tagged.h"
#include "core/dirty/wbits.h"
#include "core/region/meta.h"
#include "core/region/protect.h"
#include "core/region/records.h"
#include "core/region/region.h"
#include "core/region/rmap.h"
#include "core/region/views.h"
#include "core/start/init.h"

/* The tracked regions, in the order tracking started; under the define lock,
 * which also serialises tracking against region_free. */
static struct rtl_dirty *tracked_head, *tracked_tail;
static struct rtl_pool state_pool = RTL_POOL_INIT(sizeof(struct rtl_dirty));
static size_t n_wbits; /* tracked regions on written bits */
/* Odd while region_dirty turns written pages into pending marks: a
 * checkpoint that overlaps it takes its twin whatever it saw. */
static _Atomic unsigned scan_seq;

unsigned char *rtl_dirty_contents(const struct rtl_region *r)
{
	return (unsigned char *)(rtl_view_base(RTL_VIEW_RW) + r->lo);
}

/* twin := contents now; marks the region. r's lock held. */
static void take_twin(struct rtl_region *r, struct rtl_dirty *d)
{
	memcpy(d->twin, rtl_dirty_contents(r), r->size);
	d->has_twin = 1;
	atomic_store_explicit(&d->dirty, 1, memory_order_relaxed);
}

/* ---- hooks (async-signal-safe) ---- */

void rtl_dirty_raise(struct rtl_region *r)
{
	struct rtl_dirty *d = r->ext;

	if (d && !d->has_twin)
		take_twin(r, d);
}

void rtl_dirty_write_trap(struct rtl_found *f)
{
	struct rtl_region *r = f->r;
	struct rtl_dirty *d;

	/* Untracked regions pay one load. ext only changes under the define
	 * lock and this lock, so the check below under the lock decides. */
	if (!__atomic_load_n(&r->ext, __ATOMIC_RELAXED))
		return;
	if (rtl_region_lock(f) < 0)
		return; /* freed meanwhile: the trap path will say so */
	d = r->ext;
	if (d) {
		/* On written bits the twin is there and the kernel sees the
		 * write once it is made: nothing to mark before it. */
		if (!d->views) {
			if (!d->has_twin)
				take_twin(r, d);
			atomic_store_explicit(&d->dirty, 1, memory_order_relaxed);
		}
		/* rtl lowered the region to PROT_READ for tracking; with nobody
		 * else to decide, rtl raises it back. The trap path then resumes
		 * the access as it does for any access the region allows. */
		if (!atomic_load(&r->mixed) &&
		    atomic_load(&r->view) == RTL_VIEW_RO &&
		    !atomic_load(&r->handler) && !atomic_load(&rtl_default_handler))
			rtl_protect_locked(r, RTL_VIEW_RW);
	}
	rtl_lock_release(&r->lock);
}

/* ---- written bits ---- */

/* The tracked region on written bits at offset off, or NULL. Lock-free: a
 * state read here may be going away; a pending mark on it is harmless (it
 * only makes region_dirty compare a region with its twin). */
static struct rtl_dirty *wbits_state_at(uint64_t off, struct rtl_region **rp)
{
	struct rtl_found f;
	struct rtl_dirty *d;

	if (rtl_region_find(rtl_view_base(RTL_VIEW_RW) + off, &f) < 0)
		return NULL;
	*rp = f.r;
	d = __atomic_load_n(&f.r->ext, __ATOMIC_ACQUIRE);
	return d && d->views ? d : NULL;
}

struct written {
	struct rtl_dirty *self; /* a checkpoint's own region, or NULL */
	int self_written;
};

/* Pages [lo, hi) were written (and are armed again): every tracked region
 * on them may have changed. */
static void note_written(void *ctx, uint64_t lo, uint64_t hi)
{
	struct written *w = ctx;

	for (uint64_t off = rtl_rmap_next(lo, hi); off < hi;) {
		struct rtl_region *r = NULL;
		struct rtl_dirty *d = wbits_state_at(off, &r);

		if (!r) {
			off = rtl_rmap_next(off + RTL_GRANULE, hi);
			continue;
		}
		if (d && d == w->self) {
			w->self_written = 1;
		} else if (d) {
			uint64_t a = lo, b = hi, x;

			/* The written part, widened: another scan may add. */
			x = atomic_load(&d->pend_lo);
			while (a < x && !atomic_compare_exchange_weak(&d->pend_lo, &x, a))
				;
			x = atomic_load(&d->pend_hi);
			while (b > x && !atomic_compare_exchange_weak(&d->pend_hi, &x, b))
				;
			atomic_store(&d->pending, 1);
		}
		off = rtl_rmap_next(r->lo + r->span, hi);
	}
}

/* The views a region's writes go through: rtl's RW view, and the RO view
 * when it is protected in place there; 0 when written bits cannot see
 * them (a home in the NONE view is a mapping of its own). */
static unsigned wbits_views(const struct rtl_region *r)
{
	int home = rtl_region_home(r);

	if (home == RTL_VIEW_NONE)
		return 0;
	return RTL_WBITS_RW | (home == RTL_VIEW_RO ? RTL_WBITS_RO : 0);
}

/* Whether a region tracked with want goes on written bits: not when a
 * handler would see its writes (unless asked), and only where the kernel
 * has them. Define lock held. */
static int wants_wbits(const struct rtl_region *r, int want)
{
	if (want == RTL_TRACK_TRAPS || !wbits_views(r))
		return 0;
	if (want == RTL_TRACK_ON &&
	    (atomic_load(&r->handler) || atomic_load(&rtl_default_handler)))
		return 0;
	return rtl_wbits_ready();
}

/* A new epoch on written bits (r's lock held): the written pages of r are
 * read and armed again (a neighbour on a shared page is told), then the
 * twin is taken if r may have changed since it was. Arm first: a write
 * after that is seen, one before is in the twin. */
static void arm_wbits(struct rtl_region *r, struct rtl_dirty *d)
{
	unsigned seq = atomic_load(&scan_seq);
	struct written w = { d, 0 };
	int changed = d->seen || atomic_exchange(&d->pending, 0) || !d->has_twin;

	atomic_store(&d->pend_lo, UINT64_MAX);
	atomic_store(&d->pend_hi, 0);

	/* Marked, its pages were left to it: they count it again. (If the
	 * kernel refuses, a scan of them still reads them as written.) */
	int was_counted = d->counted;

	if (!d->counted && rtl_wbits_arm(r->lo, r->span, d->views) == 0)
		d->counted = 1;
	if (rtl_wbits_collect_range(r->lo, r->span, d->views, note_written, &w,
	                            was_counted) < 0)
		changed = 1;
	if (changed || w.self_written || (seq & 1) || seq != atomic_load(&scan_seq))
		memcpy(d->twin, rtl_dirty_contents(r), r->size);
	d->has_twin = 1;
	d->seen = 0;
	atomic_store_explicit(&d->dirty, 0, memory_order_relaxed);
}

/* Start a new epoch for d's region (its lock held): no twin, no mark, and no
 * pointer that writes without trapping. A MAP2 region may have a pointer in
 * the writable view that rtl cannot lower: it gets its twin at once. */
static void arm(struct rtl_region *r, struct rtl_dirty *d)
{
	if (d->views) {
		arm_wbits(r, d);
		return;
	}
	d->has_twin = 0;
	if (atomic_load(&r->mixed))
		take_twin(r, d);
	else if (atomic_load(&r->view) == RTL_VIEW_RW)
		rtl_protect_locked(r, RTL_VIEW_RO);
	atomic_store_explicit(&d->dirty, 0, memory_order_relaxed);
}

/* region_dirty's look at the written bits (define lock held): every page
 * written since the last look is armed again and its regions pending; a
 * pending region not marked this epoch is marked if it differs from its
 * twin. If the kernel refuses the scan, every region is compared. */
static void look_written(void)
{
	struct written w = { NULL, 0 };
	int failed;

	atomic_fetch_add(&scan_seq, 1);
	failed = rtl_wbits_collect(note_written, &w) < 0;
	atomic_fetch_add(&scan_seq, 1);
	for (struct rtl_dirty *d = tracked_head; d; d = d->next) {
		struct rtl_region *r = d->r;
		uint64_t a, b;

		if (!d->views || !(atomic_exchange(&d->pending, 0) || failed))
			continue;
		/* Only the written pages can differ from the twin (an empty
		 * range: a checkpoint took those writes into it meanwhile). */
		a = atomic_exchange(&d->pend_lo, UINT64_MAX);
		b = atomic_exchange(&d->pend_hi, 0);
		if (failed || a < r->lo)
			a = r->lo;
		if (failed || b > r->lo + r->size)
			b = r->lo + r->size;
		rtl_lock_acquire(&r->lock);
		if (!d->seen && a < b &&
		    memcmp(rtl_dirty_contents(r) + (a - r->lo), d->twin + (a - r->lo), b - a)) {
			d->seen = 1;
			atomic_store_explicit(&d->dirty, 1, memory_order_relaxed);
			/* Marked till its checkpoint: its writes need no fault
			 * and no scan meanwhile. */
			if (d->counted) {
				rtl_wbits_disarm(r->lo, r->span, d->views);
				d->counted = 0;
			}
		}
		rtl_lock_release(&r->lock);
	}
}

/* ---- tracked list (define lock held) ---- */

static void list_append(struct rtl_dirty *d)
{
	d->next = NULL;
	d->prev = tracked_tail;
	if (tracked_tail)
		tracked_tail->next = d;
	else
		tracked_head = d;
	tracked_tail = d;
}

static void list_remove(struct rtl_dirty *d)
{
	if (d->prev)
		d->prev->next = d->next;
	else
		tracked_head = d->next;
	if (d->next)
		d->next->prev = d->prev;
	else
		tracked_tail = d->prev;
}

static struct rtl_dirty *state_new(size_t size)
{
	struct rtl_dirty *d = rtl_pool_get(&state_pool);

	if (!d)
		return NULL;
	d->twin = rtl_meta_alloc(size);
	if (!d->twin) {
		rtl_pool_put(&state_pool, d);
		return NULL;
	}
	return d;
}

static void state_free(struct rtl_dirty *d, size_t size)
{
	if (!d)
		return;
	rtl_meta_free(d->twin, size);
	rtl_pool_put(&state_pool, d);
}

/* r leaves written bits (define lock held, its lock too): its pages count
 * it no more. */
static void wbits_leave(struct rtl_region *r, struct rtl_dirty *d)
{
	if (!d->views)
		return;
	if (d->counted)
		rtl_wbits_disarm(r->lo, r->span, d->views);
	d->views = 0;
	d->counted = 0;
	n_wbits--;
}

/* Detach r's state (define lock held); the caller frees it. */
static struct rtl_dirty *detach(struct rtl_region *r)
{
	struct rtl_dirty *d;

	rtl_lock_acquire(&r->lock);
	d = r->ext;
	__atomic_store_n(&r->ext, NULL, __ATOMIC_RELAXED);
	if (d)
		wbits_leave(r, d);
	rtl_lock_release(&r->lock);
	if (d)
		list_remove(d);
	return d;
}

void rtl_dirty_forget(struct rtl_region *r)
{
	if (r->ext)
		state_free(detach(r), r->size);
}

/* d's region (locked) goes on traps from now on, as a trap-tracked region
 * that has been written would be: writable, with its twin, marked if it
 * differs. */
static void to_traps(struct rtl_region *r, struct rtl_dirty *d)
{
	if (!d->seen && memcmp(rtl_dirty_contents(r), d->twin, r->size))
		atomic_store_explicit(&d->dirty, 1, memory_order_relaxed);
	d->has_twin = 1;
	d->seen = 0;
	atomic_store(&d->pending, 0);
	wbits_leave(r, d);
}

/* d's region (locked) goes on written bits (views): its twin is taken now
 * unless one is there (written since its checkpoint: it stays, and so does
 * the mark). 0, or -1 if the pages could not be armed (it stays on traps). */
static int to_wbits(struct rtl_region *r, struct rtl_dirty *d, unsigned views)
{
	/* Its span, padding included: no other region's, and armed it reads
	 * as not written, so that a scan of regions side by side (a buddy
	 * block is twice a page-sized region) reports only written runs. A
	 * region written since its checkpoint is armed at the next one. */
	if (!d->has_twin && rtl_wbits_arm(r->lo, r->span, views) < 0)
		return -1;
	d->views = (unsigned char)views;
	d->counted = !d->has_twin;
	n_wbits++;
	d->seen = (unsigned char)d->has_twin;
	if (!d->has_twin)
		memcpy(d->twin, rtl_dirty_contents(r), r->size);
	d->has_twin = 1;
	return 0;
}

void rtl_dirty_after_fork(void)
{
	int ok = rtl_wbits_after_fork() == 0;

	/* The child's pages were armed again, not its written bits kept:
	 * every region looks at its twin next time. */
	for (struct rtl_dirty *d = tracked_head; d; d = d->next) {
		if (!d->views)
			continue;
		if (ok) {
			atomic_store(&d->pend_lo, d->r->lo);
			atomic_store(&d->pend_hi, d->r->lo + d->r->size);
			atomic_store(&d->pending, 1);
		} else
			to_traps(d->r, d); /* its lock was reset for the child */
	}
}

/* ---- the API ---- */

int region_track(void *addr, int on)
{
	struct rtl_dirty *d = NULL;
	struct rtl_found f;
	struct rtl_region *r;
	rtl_shards_t s;
	size_t size;
	int err = 0, wb;

	if (rtl_ensure_init() < 0)
		return -1;
	if (!addr || on < RTL_TRACK_OFF || on > RTL_TRACK_WRITTEN) {
		errno = EINVAL;
		return -1;
	}
	if (rtl_tag_owns((uintptr_t)addr)) { /* no twin on tags yet */
		errno = ENOTSUP;
		return -1;
	}
	pthread_mutex_lock(&rtl_define_lock);
	if (rtl_region_find((uintptr_t)addr, &f) < 0) {
		pthread_mutex_unlock(&rtl_define_lock);
		errno = ENOENT;
		return -1;
	}
	r = f.r;
	size = r->size;
	/* Its shards too: a free that holds them alone (a region defined in
	 * place) relies on r->ext staying as it saw it. */
	s = rtl_shards_of(r->lo, r->span);
	rtl_shards_lock(s);
	/* Asked before the region's lock: the probe's system calls. */
	wb = on && wants_wbits(r, on);
	if (atomic_load(&r->gen) != f.gen) {
		err = ENOENT; /* freed meanwhile */
	} else if (!on) {
		state_free(r->ext ? detach(r) : NULL, size);
	} else if (!r->ext && !(d = state_new(size))) {
		err = ENOMEM;
	} else if (rtl_region_lock(&f) < 0) {
		err = errno;
	} else {
		if (d) {
			d->r = r;
			d->want = (unsigned char)on;
			atomic_store(&d->pend_lo, UINT64_MAX);
			list_append(d);
			if (wb && to_wbits(r, d, wbits_views(r)) == 0)
				atomic_store_explicit(&d->dirty, 0, memory_order_relaxed);
			else
				arm(r, d);
			__atomic_store_n(&r->ext, d, __ATOMIC_RELAXED);
			d = NULL;
		} else {
			/* Tracked already: another way from now on, if asked. */
			struct rtl_dirty *t = r->ext;

			t->want = (unsigned char)on;
			if (t->views && !wb)
				to_traps(r, t);
			else if (!t->views && wb)
				to_wbits(r, t, wbits_views(r));
		}
		rtl_lock_release(&r->lock);
	}
	rtl_shards_unlock(s);
	pthread_mutex_unlock(&rtl_define_lock);
	state_free(d, size);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

size_t region_dirty(void **bases, size_t max, int reset)
{
	struct rtl_dirty *d;
	size_t n = 0;

	if (rtl_ensure_init() < 0)
		return 0;
	if (!bases)
		max = 0;
	pthread_mutex_lock(&rtl_define_lock);
	if (n_wbits)
		look_written();
	for (d = tracked_head; d; d = d->next) {
		int marked;

		/* Exchange, so that a write trapping meanwhile is either in
		 * this report or marks the region again for the next. */
		if (n < max && reset)
			marked = atomic_exchange(&d->dirty, 0);
		else
			marked = atomic_load(&d->dirty);
		if (!marked)
			continue;
		if (n < max) {
			/* Where its pointers are: an in-place region's home. */
			int v = rtl_region_home(d->r);

			if (v < 0)
				v = atomic_load(&d->r->view);
			bases[n] = (void *)(rtl_view_base(v) + d->r->lo);
		}
		n++;
	}
	pthread_mutex_unlock(&rtl_define_lock);
	return n;
}

int region_checkpoint(void *addr)
{
	struct rtl_found f;
	struct rtl_dirty *d;

	if (rtl_ensure_init() < 0)
		return -1;
	if (rtl_region_find_locked(addr, &f) < 0)
		return -1;
	d = f.r->ext;
	if (d)
		arm(f.r, d);
	rtl_lock_release(&f.r->lock);
	if (!d) {
		errno = EINVAL; /* not tracked */
		return -1;
	}
	return 0;
}

int region_tracking(const void *addr)
{
	struct rtl_found f;
	struct rtl_dirty *d;
	int how = 0;

	if (rtl_ensure_init() < 0)
		return -1;
	if (addr && rtl_tag_owns((uintptr_t)addr)) { /* never tracked */
		struct rtl_tag_found tf;

		return rtl_tag_find((uintptr_t)addr, &tf) == 0 ? 0 : (errno = ENOENT, -1);
	}
	if (rtl_region_find_locked(addr, &f) < 0)
		return -1;
	d = f.r->ext;
	if (d)
		how = d->views ? RTL_DIRTY_WRITTEN_BITS : RTL_DIRTY_TRAPS;
	rtl_lock_release(&f.r->lock);
	return how;
}

int region_dirty_backend(const char **why)
{
	int on;

	if (rtl_ensure_init() < 0)
		return -1;
	pthread_mutex_lock(&rtl_define_lock);
	on = rtl_wbits_ready();
	if (why)
		*why = rtl_wbits_why();
	pthread_mutex_unlock(&rtl_define_lock);
	return on ? RTL_DIRTY_WRITTEN_BITS : RTL_DIRTY_TRAPS;
}
