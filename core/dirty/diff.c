/* Diffs of tracked regions: compare with the twin (region_diff), the portable
 * encoding (region_diff_encode) and its application (region_diff_apply). The
 * format is in docs/dirty.md. An encoded diff is untrusted input: apply
 * checks all of it before it writes one byte, and never reads past len.
 * Only the region's spin lock is taken, so all three may run in a handler. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "core/dirty/diffcodec.h"
#include "core/dirty/dirty.h"
#include "core/region/region.h"
#include "core/start/init.h"

/* Lock the tracked region at addr; its state, or NULL with errno (EINVAL:
 * not tracked). On success the caller releases f->r->lock. */
static struct rtl_dirty *tracked_locked(void *addr, struct rtl_found *f)
{
	struct rtl_dirty *d;

	if (rtl_ensure_init() < 0 || rtl_region_find_locked(addr, f) < 0)
		return NULL;
	d = f->r->ext;
	if (!d) {
		rtl_lock_release(&f->r->lock);
		errno = EINVAL;
	}
	return d;
}

struct collect {
	rtl_run_t *runs;
	size_t max, n;
};

static int collect_run(void *ctx, size_t off, size_t len)
{
	struct collect *c = ctx;

	if (c->n < c->max)
		c->runs[c->n] = (rtl_run_t){ off, len };
	c->n++;
	return 0;
}

ssize_t region_diff(void *addr, rtl_run_t *runs, size_t max)
{
	struct collect c = { runs, max, 0 };
	struct rtl_found f;
	struct rtl_dirty *d;
	size_t n = 0;

	if (max && !runs) {
		errno = EINVAL;
		return -1;
	}
	if (!(d = tracked_locked(addr, &f)))
		return -1;
	if (d->has_twin)
		n = rtl_diff_scan(rtl_dirty_contents(f.r), d->twin, f.r->size,
		                  max ? collect_run : NULL, &c);
	rtl_lock_release(&f.r->lock);
	if (max && n > max) {
		errno = ENOSPC;
		return -1;
	}
	return (ssize_t)n;
}

ssize_t region_diff_encode(void *addr, void *buf, size_t cap)
{
	struct rtl_found f;
	struct rtl_dirty *d;
	ssize_t n;

	if (cap && !buf) {
		errno = EINVAL;
		return -1;
	}
	if (!(d = tracked_locked(addr, &f)))
		return -1;
	/* No twin: nothing was written since the checkpoint. */
	n = rtl_diff_encode(rtl_dirty_contents(f.r), d->has_twin ? d->twin : NULL,
	                    f.r->size, buf, cap);
	rtl_lock_release(&f.r->lock);
	return n;
}

/* ---- applying ---- */

int region_diff_apply(void *addr, const void *buf, size_t len)
{
	struct rtl_found f;
	struct rtl_dirty *d;
	uint64_t size;
	int ok;

	if (rtl_ensure_init() < 0)
		return -1;
	if (!buf) {
		errno = EINVAL;
		return -1;
	}
	if (rtl_region_find_locked(addr, &f) < 0)
		return -1;
	size = f.r->size;
	rtl_lock_release(&f.r->lock);
	/* Check first, without the lock: reading buf may trap if it lies in
	 * a protected region. (If the region goes meanwhile, the lock below
	 * fails on its new generation.) */
	if (rtl_diff_walk(buf, len, size, NULL, NULL) < 0) {
		errno = EINVAL;
		return -1;
	}
	if (rtl_region_lock(&f) < 0)
		return -1;
	d = f.r->ext;
	/* Checked again while copying: if buf changed meanwhile (the caller's
	 * race), the copy stops at the first bad run and stays in bounds. */
	ok = rtl_diff_walk(buf, len, size, rtl_dirty_contents(f.r),
	                   d && d->has_twin ? d->twin : NULL);
	rtl_lock_release(&f.r->lock);
	if (ok < 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}
