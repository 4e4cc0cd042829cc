/* The region mechanism (the RT version): each shared allocation is one rtl
 * region, tracked (rtl takes the twin at the first write trap, before our
 * handler runs), protected with region_protect, diffed with
 * region_diff_encode and patched with region_diff_apply, which checks its
 * input completely. The DSM never dereferences a region pointer of its own:
 * it reads contents through the region's RO view only (contract checks).
 *
 * region_handler_fn runs inside rtl's SIGSEGV handler: it calls dsm_fault,
 * whose region_protect also moves the interrupted registers.
 *
 * The WB version (dsm_region_alloc_wb) tracks a region of a page or more on
 * the kernel's written bits: a valid unit stays writable, so its writes take
 * no trap, and at each release rt_wb_harvest asks region_dirty which were
 * written and makes them this interval's write notices. While a diff is
 * made, the unit is lowered (hold), so that a write meanwhile traps and
 * waits as it does in RT: none slips between the diff and the twin. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static _Atomic int any_wb; /* some unit is on written bits */

static void *alloc(size_t size, void *bptr, int wb)
{
	const struct mech *m = &dsm_mech_region;
	struct unit *u;
	void *p;

	if (!size || !bptr) {
		errno = EINVAL;
		return NULL;
	}
	if (!(p = region_alloc(size, bptr)))
		return NULL;
	/* The handler first: tracking with one takes traps unless asked. */
	region_handler(p, region_handler_fn);
	wb = wb && size >= (size_t)sysconf(_SC_PAGESIZE);
	if (region_track(p, wb ? RTL_TRACK_WRITTEN : RTL_TRACK_TRAPS) < 0) {
		region_free(p);
		return NULL;
	}
	if (wb && region_tracking(p) == RTL_DIRTY_WRITTEN_BITS) {
		m = &dsm_mech_region_wb;
		atomic_store(&any_wb, 1);
	}
	u = dsm_unit_new(m, p, ro_view(p), size);
	if (!u) {
		region_free(p);
		return NULL;
	}
	region_set_data(p, u);
	u->prot = DSM_READ; /* valid: traps lowered it; written bits left it writable */
	dsm_alloc_note(2, size);
	return *(void **)bptr;
}

void *dsm_region_alloc(size_t size, void *bptr)
{
	return alloc(size, bptr, 0);
}

void *dsm_region_alloc_wb(size_t size, void *bptr)
{
	return alloc(size, bptr, 1);
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

/* ---- written bits ---- */

/* Valid is writable: DSM_READ and DSM_RW are both the writable view. */
static void wb_protect(struct unit *u, int prot)
{
	region_protect_unit(u, prot == DSM_NONE ? DSM_NONE : DSM_RW);
}

static void wb_hold(struct unit *u, int on)
{
	if (u->prot == DSM_NONE)
		return;
	if (on)
		region_protect_unit(u, DSM_READ);
	else
		wb_protect(u, u->prot);
}

void rt_wb_harvest(void)
{
	static void **bases;
	static size_t cap;
	size_t n;

	if (!atomic_load(&any_wb))
		return;
	for (;;) {
		n = region_dirty(bases, cap, 1);
		for (size_t i = 0; i < n && i < cap; i++) {
			struct region_info info;
			struct unit *u;

			if (region_find(bases[i], &info) < 0 || !(u = info.data) ||
			    u->mech != &dsm_mech_region_wb)
				continue;
			unit_lock(u);
			/* What a first write trap does (fault.c), but the twin:
			 * it is there since the last checkpoint. */
			if (!u->twinned && u->prot != DSM_NONE) {
				u->twinned = 1;
				u->prot = DSM_RW;
				STAT(written_units, 1);
				if (!u->in_dirty) {
					u->in_dirty = 1;
					dsm.dirty[dsm.ndirty++] = u->id;
				}
			}
			unit_unlock(u);
		}
		if (n <= cap)
			return;
		free(bases);
		cap = 2 * n;
		if (!(bases = malloc(cap * sizeof(*bases))))
			dsm_die("out of memory for the written units");
	}
}

const struct mech dsm_mech_region_wb = {
	.name = "region on written bits",
	/* A write through any pointer to the writable view is seen. */
	.check_stale = 0,
	.protect = wb_protect,
	.twin_take = region_twin_take,
	.encode = region_encode,
	.twin_drop = region_twin_drop,
	.apply = region_apply,
	.contents = region_contents,
	.hold = wb_hold,
};

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
