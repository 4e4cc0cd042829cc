/* The region mechanism (the RT version): each shared allocation is one rtl
 * region, tracked (rtl takes the twin at the first write trap, before our
 * handler runs), protected with region_protect, diffed with
 * region_diff_encode and patched with region_diff_apply, which checks its
 * input completely. The DSM never dereferences a region pointer of its own:
 * it reads contents through the region's RO view only (contract checks).
 *
 * region_handler_fn runs inside rtl's SIGSEGV handler: it calls dsm_fault,
 * whose region_protect also moves the interrupted registers. */
#include <errno.h>
#include <string.h>

#include <rtl/region.h>

#include "dsm/internal.h"

static void region_handler_fn(rtl_trap_t *t)
{
	dsm_fault(t->data, t->write);
}

/* The region's address in rtl's read-only view. */
static void *ro_view(void *p)
{
	return region_view(p, PROT_READ);
}

void *dsm_region_alloc(size_t size, void *bptr)
{
	struct unit *u;
	void *p;

	if (!size || !bptr) {
		errno = EINVAL;
		return NULL;
	}
	if (!(p = region_alloc(size, bptr)))
		return NULL;
	if (region_track(p, 1) < 0) {
		region_free(p);
		return NULL;
	}
	u = dsm_unit_new(&dsm_mech_region, p, ro_view(p), size);
	if (!u) {
		region_free(p);
		return NULL;
	}
	region_set_data(p, u);
	region_handler(p, region_handler_fn);
	u->prot = DSM_READ; /* tracking lowered it */
	dsm_alloc_note(2, size);
	return *(void **)bptr;
}

/* ---- the mechanism (protect and twin_take run in the trap handler) ---- */

static void region_protect_unit(struct unit *u, int prot)
{
	static const int p[] = { PROT_NONE, PROT_READ, PROT_READ | PROT_WRITE };

	region_protect(u->addr, p[prot]); /* cannot fail on a live region */
}

static void region_twin_take(struct unit *u)
{
	(void)u; /* rtl took it at the write trap (or takes it on raising) */
}

static ssize_t region_encode(struct unit *u, void *buf, size_t cap)
{
	ssize_t n = region_diff_encode(u->addr, buf, cap);

	if (n < 0 && errno != ENOSPC)
		dsm_die("region_diff_encode of unit %u: %s", u->id,
		        strerror(errno));
	return n;
}

static void region_twin_drop(struct unit *u)
{
	region_checkpoint(u->addr);
}

static int region_apply(struct unit *u, const void *buf, size_t len)
{
	return region_diff_apply(u->addr, buf, len);
}

static const void *region_contents(struct unit *u)
{
	return u->sys;
}

const struct mech dsm_mech_region = {
	.name = "region",
	/* region_protect from the service thread moves registered pointers,
	 * not the application's registers: check (lrc_own_diff). */
	.check_stale = 1,
	.protect = region_protect_unit,
	.twin_take = region_twin_take,
	.encode = region_encode,
	.twin_drop = region_twin_drop,
	.apply = region_apply,
	.contents = region_contents,
};
