/* DIRTY: which tracked regions were written, with TreadMarks' lazy twins:
 * region_track, region_dirty, region_checkpoint and the hooks the trap path
 * and region_protect call. The hooks run in a signal handler: they take only
 * the region's spin lock and memcpy into twin storage allocated beforehand;
 * never malloc or a mutex there. */
#include <errno.h>
#include <string.h>

#include "core/dirty/dirty.h"
#include "core/region/meta.h"
#include "core/region/protect.h"
#include "core/region/records.h"
#include "core/region/region.h"
#include "core/region/views.h"
#include "core/start/init.h"

/* The tracked regions, in the order tracking started; under the define lock,
 * which also serialises tracking against region_free. */
static struct rtl_dirty *tracked_head, *tracked_tail;
static struct rtl_pool state_pool = RTL_POOL_INIT(sizeof(struct rtl_dirty));

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
		if (!d->has_twin)
			take_twin(r, d);
		atomic_store_explicit(&d->dirty, 1, memory_order_relaxed);
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

/* Start a new epoch for d's region (its lock held): no twin, no mark, and no
 * pointer that writes without trapping. A MAP2 region may have a pointer in
 * the writable view that rtl cannot lower: it gets its twin at once. */
static void arm(struct rtl_region *r, struct rtl_dirty *d)
{
	d->has_twin = 0;
	if (atomic_load(&r->mixed))
		take_twin(r, d);
	else if (atomic_load(&r->view) == RTL_VIEW_RW)
		rtl_protect_locked(r, RTL_VIEW_RO);
	atomic_store_explicit(&d->dirty, 0, memory_order_relaxed);
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

/* Detach r's state (define lock held); the caller frees it. */
static struct rtl_dirty *detach(struct rtl_region *r)
{
	struct rtl_dirty *d;

	rtl_lock_acquire(&r->lock);
	d = r->ext;
	__atomic_store_n(&r->ext, NULL, __ATOMIC_RELAXED);
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

/* ---- the API ---- */

int region_track(void *addr, int on)
{
	struct rtl_dirty *d = NULL;
	struct rtl_found f;
	struct rtl_region *r;
	rtl_shards_t s;
	size_t size;
	int err = 0;

	if (rtl_ensure_init() < 0)
		return -1;
	if (!addr) {
		errno = EINVAL;
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
			list_append(d);
			arm(r, d);
			__atomic_store_n(&r->ext, d, __ATOMIC_RELAXED);
			d = NULL;
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
