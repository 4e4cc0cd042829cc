/* Region records and the define/free half of the API: region_alloc,
 * region_define, region_free, region_handler, region_set_data. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/dirty/dirty.h"
#include "core/region/extent.h"
#include "core/region/inplace.h"
#include "core/region/lookup.h"
#include "core/region/meta.h"
#include "core/region/placement.h"
#include "core/region/pointers.h"
#include "core/region/records.h"
#include "core/region/rmap.h"
#include "core/region/views.h"
#include "core/start/init.h"
#include "core/start/stats.h"
#include "core/tag/api.h"
#include "core/tag/tagged.h"
#include "core/util/say.h"

/* Adaptive: a waiter spins a while before it sleeps (its sections are
 * short). Regions defined in place take the shard locks alone
 * (records.h); owned ones take this one too, for the extent allocator. */
pthread_mutex_t rtl_define_lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
_Atomic(region_handler_t) rtl_default_handler;

/* ---- lookup (lock-free, async-signal-safe) ---- */

int rtl_region_find(uintptr_t a, struct rtl_found *f)
{
	int view = rtl_view_of(a);

	return view < 0 ? -1 : rtl_region_find_in(a, view, f);
}

int rtl_region_lock(struct rtl_found *f)
{
	if (rtl_lock_acquire(&f->r->lock) < 0)
		return -1;
	if (atomic_load_explicit(&f->r->gen, memory_order_relaxed) != f->gen) {
		rtl_lock_release(&f->r->lock);
		errno = ENOENT;
		return -1;
	}
	return 0;
}

int rtl_region_find_locked(const void *addr, struct rtl_found *f)
{
	if (!addr) {
		errno = EINVAL;
		return -1;
	}
	if (rtl_region_find((uintptr_t)addr, f) < 0) {
		errno = ENOENT;
		return -1;
	}
	return rtl_region_lock(f);
}

/* ---- allocation ---- */

/* A new owned region of size bytes; returns its record, NULL with errno. */
static struct rtl_region *alloc_owned(size_t size)
{
	size_t block = rtl_extent_block(size + 1); /* strictly larger: a gap */
	struct rtl_region *r = NULL;
	int64_t off;

	if (!block) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&rtl_define_lock);
	off = rtl_extent_alloc(block);
	if (off >= 0 && rtl_views_commit((uint64_t)off + block) < 0) {
		rtl_extent_free((uint64_t)off, block);
		off = -1;
		errno = ENOMEM;
	}
	if (off >= 0) {
		rtl_shards_t s = rtl_shards_of((uint64_t)off, block);

		rtl_shards_lock(s);
		r = rtl_region_create((uint64_t)off, size, block, RTL_REGION_OWNED,
		                      RTL_VIEW_RW, NULL, NULL);
		rtl_shards_unlock(s);
		if (!r) {
			rtl_extent_free((uint64_t)off, block);
			errno = ENOMEM;
		}
	}
	pthread_mutex_unlock(&rtl_define_lock);
	return r;
}

/* End a region: its shards are held, and the define lock if it is owned
 * or tracked (free_found). */
static void free_record_locked(struct rtl_region *r)
{
	uint64_t off = r->lo;
	size_t span = r->span;
	int owned = r->flags & RTL_REGION_OWNED;

	rtl_ptrs_unbind_region(r);
	rtl_dirty_forget(r);
	rtl_region_destroy(r);
	if (owned) {
		rtl_views_release(off, span);
		rtl_extent_free(off, span);
	}
}

/* Free the region f found, if it is still that one (of two concurrent
 * frees, the second sees a new generation and fails with ENOENT). Only the
 * region's shards for a region defined in place and not tracked; the
 * define lock first for the others (extents, the tracked list). A region
 * cannot become tracked meanwhile: region_track takes its shards too. */
static int free_found(const struct rtl_found *f)
{
	struct rtl_region *r = f->r;
	rtl_shards_t s = rtl_shards_of(r->lo, r->span);
	int global = 0;

	for (;;) {
		if (global)
			pthread_mutex_lock(&rtl_define_lock);
		rtl_shards_lock(s);
		if (atomic_load(&r->gen) != f->gen) {
			rtl_shards_unlock(s);
			if (global)
				pthread_mutex_unlock(&rtl_define_lock);
			errno = ENOENT;
			return -1;
		}
		if (global || (!(r->flags & RTL_REGION_OWNED) && !r->ext))
			break;
		rtl_shards_unlock(s); /* the define lock comes first */
		global = 1;
	}
	free_record_locked(r);
	rtl_shards_unlock(s);
	if (global)
		pthread_mutex_unlock(&rtl_define_lock);
	return 0;
}

int rtl_block_free(const struct rtl_block *b)
{
	struct rtl_found f = { .r = b ? b->region : NULL, .gen = b ? b->gen : 0 };

	if (!f.r) {
		errno = EINVAL;
		return -1;
	}
	return free_found(&f);
}

static void free_record(struct rtl_region *r)
{
	struct rtl_found f = { .r = r, .gen = atomic_load(&r->gen) };

	free_found(&f);
}

static void *bind_or_undo(struct rtl_region *r, void *bptr, uintptr_t addr)
{
	if (bptr) {
		if (rtl_var_store(bptr, (void *)addr) < 0 ||
		    rtl_ptr_bind(r, bptr) < 0) {
			int e = errno;
			free_record(r);
			errno = e;
			return NULL;
		}
	}
	return (void *)addr;
}

/* A new region of size bytes, or NULL (ENOMEM) when no view could hold
 * it. */
static struct rtl_region *alloc_fitting(size_t size)
{
	if (size >= rtl_views.size) {
		errno = ENOMEM;
		return NULL;
	}
	return alloc_owned(size);
}

void *region_alloc(size_t size, void *bptr)
{
	struct rtl_region *r;

	if (rtl_ensure_decoder() < 0)
		return NULL;
	if (size == 0) {
		errno = EINVAL;
		return NULL;
	}
	r = alloc_fitting(size);
	if (!r)
		return NULL;
	return bind_or_undo(r, bptr, rtl_view_base(RTL_VIEW_RW) + r->lo);
}

/* [addr, addr+size) already lies in the views: define it in place, with
 * its handler and data set before any other thread can find it. */
static struct rtl_region *define_in_place(uintptr_t addr, size_t size,
                                          region_handler_t h, void *data)
{
	int view = rtl_view_of(addr);
	uint64_t off = addr - rtl_view_base(view);
	uint64_t span = (size + RTL_GRANULE) & ~(uint64_t)(RTL_GRANULE - 1); /* > size */
	struct rtl_region *r = NULL;
	rtl_shards_t s;

	if ((off & (RTL_GRANULE - 1)) || off + span > rtl_views.size) {
		errno = EINVAL;
		return NULL;
	}
	s = rtl_shards_of(off, span);
	rtl_shards_lock(s);
	/* EEXIST if some of it is mapped: the map checks as it inserts. */
	r = rtl_region_create(off, size, span, 0, view, h, data);
	if (r && rtl_inplace_conflict(off, span)) {
		rtl_region_destroy(r); /* those pages' protection is another's */
		r = NULL;
		errno = EBUSY;
	}
	rtl_shards_unlock(s);
	return r;
}

int rtl_define_in_views(void *addr, size_t size, region_handler_t h, void *data)
{
	uintptr_t a = (uintptr_t)addr;

	if (!rtl_started() || !addr || size == 0 || a + size < a ||
	    rtl_view_of(a) < 0 || rtl_view_of(a) != rtl_view_of(a + size - 1)) {
		errno = EINVAL;
		return -1;
	}
	return define_in_place(a, size, h, data) ? 0 : -1;
}

/* Copy n bytes from src into dst; -1 if some of src is unreadable. Through
 * the kernel, so that an unreadable source is an error, not a fault:
 * process_vm_readv, or where the system lacks it (qemu-user: ENOSYS) a
 * pipe, which write(2) fills only from readable memory. */
static int copy_checked(void *dst, const void *src, size_t n)
{
	struct iovec local = { dst, n }, remote = { (void *)(uintptr_t)src, n };
	size_t done = 0;
	int p[2];

	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n)
		return 0;
	if (errno != ENOSYS || pipe2(p, O_CLOEXEC) < 0)
		return -1;
	while (done < n) {
		size_t chunk = n - done < 65536 ? n - done : 65536;
		ssize_t w = write(p[1], (const char *)src + done, chunk), got = 0;

		while (w > 0 && got < w) {
			ssize_t k = read(p[0], (char *)dst + done + got, (size_t)(w - got));
			if (k <= 0)
				break;
			got += k;
		}
		if (w <= 0 || got < w)
			break;
		done += (size_t)w;
	}
	close(p[0]);
	close(p[1]);
	return done == n ? 0 : -1;
}

void *region_define(void *addr, size_t size, void *bptr)
{
	uintptr_t a = (uintptr_t)addr, to;
	struct rtl_region *r;
	void *old = NULL;

	if (rtl_ensure_decoder() < 0)
		return NULL;
	if (!addr || size == 0 || a + size < a ||
	    rtl_tag_overlaps(a, size)) { /* tag regions are made whole */
		errno = EINVAL;
		return NULL;
	}
	if (rtl_view_of(a) >= 0 || rtl_view_of(a + size - 1) >= 0) {
		if (rtl_view_of(a) != rtl_view_of(a + size - 1)) {
			errno = EINVAL;
			return NULL;
		}
		r = define_in_place(a, size, NULL, NULL);
		return r ? bind_or_undo(r, bptr, a) : NULL;
	}
	/* Outside the views: copy the contents into a new region. The copy
	 * goes through the kernel so that an unreadable source is EFAULT. */
	r = alloc_fitting(size);
	if (!r)
		return NULL;
	to = rtl_view_base(RTL_VIEW_RW) + r->lo;
	if (copy_checked((void *)to, addr, size) < 0) {
		free_record(r);
		errno = EFAULT;
		return NULL;
	}
	if (bptr && rtl_var_load(bptr, &old) < 0) {
		free_record(r);
		errno = EFAULT;
		return NULL;
	}
	if (!bind_or_undo(r, bptr, to))
		return NULL;
	if (bptr && (uintptr_t)old >= a && (uintptr_t)old <= a + size)
		rtl_var_store(bptr, (void *)(to + ((uintptr_t)old - a)));
	return (void *)to;
}

int region_free(void *addr)
{
	struct rtl_found f;

	if (rtl_ensure_init() < 0)
		return -1;
	if (!addr) {
		errno = EINVAL;
		return -1;
	}
	if (rtl_tag_owns((uintptr_t)addr))
		return rtl_tag_api_free(addr);
	if (rtl_region_find((uintptr_t)addr, &f) < 0) {
		errno = ENOENT;
		return -1;
	}
	return free_found(&f);
}

int region_handler(void *addr, region_handler_t h)
{
	struct rtl_found f;

	if (rtl_ensure_init() < 0)
		return -1;
	if (!addr) {
		atomic_store(&rtl_default_handler, h);
		return 0;
	}
	if (rtl_tag_owns((uintptr_t)addr))
		return rtl_tag_api_handler(addr, h);
	if (rtl_region_find_locked(addr, &f) < 0)
		return -1;
	atomic_store(&f.r->handler, h);
	rtl_lock_release(&f.r->lock);
	return 0;
}

int region_set_data(void *addr, void *data)
{
	struct rtl_found f;

	if (rtl_ensure_init() < 0)
		return -1;
	if (addr && rtl_tag_owns((uintptr_t)addr))
		return rtl_tag_api_set_data(addr, data);
	if (rtl_region_find_locked(addr, &f) < 0)
		return -1;
	atomic_store(&f.r->data, data);
	rtl_lock_release(&f.r->lock);
	return 0;
}
