/* Regions protected in place (inplace.c): pointers stay in the home view,
 * the protection is set on the home view's pages. */
#ifndef RTL_INPLACE_H
#define RTL_INPLACE_H

#include <stdint.h>

#include "core/region/region.h"

/* Make r (lock held, not MAP2) an in-place region with home view home (RO
 * or NONE) and protection view; its bound pointers move home. -1 with
 * errno: EINVAL (the RW view, already so, or MAP2), EBUSY (another region
 * lies or may come to lie on its pages), or the kernel's. */
int rtl_inplace_set(struct rtl_region *r, int home, int view);

/* Set an in-place region's protection (lock held; async-signal-safe). -1
 * if r is not in place, or was not and no longer is (mprotect failed: r
 * has become an ordinary region at its old protection). */
int rtl_inplace_protect(struct rtl_region *r, int view);

/* At free: give the home pages back their view's protection. */
void rtl_inplace_clear(struct rtl_region *r);

/* A fault on home pages whose region allows the access: another thread
 * granted it (the pages already allow it), or something outside rtl
 * changed them. Set them to the region's protection again, so that the
 * instruction cannot fault on for ever. Takes r's lock. */
void rtl_inplace_resync(struct rtl_region *r);

/* End it (lock held): the home pages get their view's protection back and
 * r moves pointers from now on. 1 if r was in place. */
int rtl_inplace_end(struct rtl_region *r);

/* In a forked child, after the views are remapped: protect again. -1 if
 * the kernel refused (a NONE home would still map the parent's file). */
int rtl_inplace_after_fork(struct rtl_region *r);

/* Whether an in-place region lies on the first or last page of
 * [lo, lo + span) (define lock held): a new region there would share it. */
int rtl_inplace_conflict(uint64_t lo, uint64_t span);

#endif
