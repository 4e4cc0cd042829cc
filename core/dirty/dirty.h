/* DIRTY: the twin and dirty mark of each tracked region (dirty.c), and the
 * diff compare, encode and apply (diff.c). A region's writes are seen by a
 * write trap or by the kernel's written bits (wbits.c), chosen when its
 * tracking starts. The hooks below run in the trap path and inside
 * region_protect: no malloc, only the region's spin lock. */
#ifndef RTL_DIRTY_H
#define RTL_DIRTY_H

#include <stdatomic.h>
#include <stddef.h>

#include "core/region/region.h"

/* Per tracked region, hung on rtl_region.ext. The twin storage is allocated
 * when tracking starts, so that taking a twin in the trap path is a memcpy. */
struct rtl_dirty {
	struct rtl_region *r;
	unsigned char *twin;           /* r->size bytes */
	int has_twin;                  /* under r->lock; 0: no modification */
	_Atomic int dirty;             /* a twin was taken since the last reset */
	struct rtl_dirty *next, *prev; /* tracked list, under rtl_define_lock */
	/* Written bits (the twin is then taken at the checkpoint, has_twin
	 * stays 1): the views its pages are armed in (0: traps), what
	 * region_track asked for, whether it was marked this epoch, and
	 * whether its pages count it (not once marked: until its checkpoint
	 * its writes need not fault, as on traps a granted region's do not). */
	unsigned char views, want, seen, counted;
	_Atomic int pending; /* a page of it was written since the last look */
	/* ... within these offsets of the views (lo starts at UINT64_MAX):
	 * what region_dirty compares with the twin */
	_Atomic uint64_t pend_lo, pend_hi;
};

/* Trap path, write access to f's region, before its handler runs: if the
 * region is tracked, take the twin (first write since the checkpoint) and
 * set its dirty mark; if it is tracked, PROT_READ, and has no handler, grant
 * the write (PROT_READ|PROT_WRITE). Async-signal-safe. */
void rtl_dirty_write_trap(struct rtl_found *f);

/* r is about to become writable through some pointer without a trap (its
 * lock held): a tracked region without a twin takes it now. */
void rtl_dirty_raise(struct rtl_region *r);

/* r is being freed (define lock held): drop its tracking state. */
void rtl_dirty_forget(struct rtl_region *r);

/* In a forked child, define lock held: written bits again, or traps for
 * every region that had them. */
void rtl_dirty_after_fork(void);

/* r's current contents, through the RW view (rtl's own accesses never
 * trap). */
unsigned char *rtl_dirty_contents(const struct rtl_region *r);

#endif
