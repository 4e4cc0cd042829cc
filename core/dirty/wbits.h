/* The kernel's written bits (wbits.c): userfaultfd's asynchronous
 * write-protection over rtl's RO and RW views, read and re-armed with
 * PAGEMAP_SCAN. A write to an armed page is resolved in the kernel, with no
 * signal, and leaves the page "written" until it is armed again. Pages are
 * armed per tracked region (a count per page and view); nothing here
 * knows regions. Not for signal handlers: system calls, and the count
 * maps change under rtl's define lock. */
#ifndef RTL_WBITS_H
#define RTL_WBITS_H

#include <stdint.h>

#include "core/util/export.h"

/* The views a region's pages are armed in (bits of enum rtl_view). */
#define RTL_WBITS_RW (1u << 2) /* 1 << RTL_VIEW_RW */
#define RTL_WBITS_RO (1u << 1) /* 1 << RTL_VIEW_RO */

/* Whether written bits serve tracking in this process: probed at the first
 * call (define lock held; the views exist). 1 or 0; rtl_wbits_why says
 * why either way, in a sentence without a final stop. */
int rtl_wbits_ready(void);
const char *rtl_wbits_why(void);

/* The pages of [off, off + len) count one more (fewer) tracked region in
 * each view of views; a page that had none is write-protected, one left
 * with none is writable again. Define lock held. 0, or -1 with errno (the
 * counts as they were). */
int rtl_wbits_arm(uint64_t off, uint64_t len, unsigned views);
void rtl_wbits_disarm(uint64_t off, uint64_t len, unsigned views);

/* Every armed page written since it was armed: each run [lo, hi) of
 * offsets is armed again, then cb(ctx, lo, hi) is called. Define lock
 * held. 0, or -1 with errno (a scan the kernel refused: the caller must
 * assume every armed page written). */
typedef void (*rtl_wbits_fn)(void *ctx, uint64_t lo, uint64_t hi);
int rtl_wbits_collect(rtl_wbits_fn cb, void *ctx);

/* The same over the pages of [off, off + len) in views (a tracked
 * region's own): atomically read and re-armed. No lock needed. counted:
 * whether the pages it finds count as found written (not when they were
 * left writable on purpose: a marked region's checkpoint). */
int rtl_wbits_collect_range(uint64_t off, uint64_t len, unsigned views,
                            rtl_wbits_fn cb, void *ctx, int counted);

/* In a forked child (define lock held): the inherited descriptors act on
 * the parent's memory; they are closed, the child's views registered and
 * every armed page armed again. 0, or -1 with the reason in
 * rtl_wbits_why (written bits are then off in the child). */
int rtl_wbits_after_fork(void);

/* fn(ctx, lo, hi) is told every run of pages found written, as the scans
 * find them (the preload's accounts: which pages a dirty-bit collector
 * would rescan). Set once, before tracking starts; NULL: none. */
RTL_PRIVATE_API void rtl_wbits_observe(rtl_wbits_fn fn, void *ctx);

/* Write-protect calls and scans made, and pages found written (for the
 * unit tests and the bench; exported for them). */
struct rtl_wbits_counts {
	uint64_t protects, scans, pages_written;
};
RTL_PRIVATE_API void rtl_wbits_counts(struct rtl_wbits_counts *out);

#endif
