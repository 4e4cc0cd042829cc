/* The kernel's side of written bits (wbits.c): a userfaultfd with
 * asynchronous write-protection over rtl's views, /proc/self/pagemap's
 * PAGEMAP_SCAN, the probe that they work here, and the reason said when
 * they do not. Not for signal handlers. Internal to core/dirty. */
#ifndef RTL_WBITS_KERNEL_H
#define RTL_WBITS_KERNEL_H

#include <stdint.h>

#include "core/util/uffd.h"

/* The descriptors opened, the self-test passed and rtl's views
 * registered: 0; or -1 with the reason said (rtl_wbits_why). */
int rtl_wbits_kernel_open(void);
void rtl_wbits_kernel_close(void);

/* Write-protect [start, start + len) (on) or let it be written (off). */
int rtl_wbits_kernel_protect(uintptr_t start, uint64_t len, int on);

/* The written pages of [start, end), at most n runs; flags 0 reads,
 * RTL_PM_SCAN_WP_MATCHING also arms what it reports. The number of runs,
 * or -1 with errno; *walk_end: where the walk stopped. */
long rtl_wbits_kernel_scan(uintptr_t start, uintptr_t end,
                           struct rtl_page_region *vec, uint64_t n,
                           uint64_t flags, uint64_t *walk_end);

/* The reason rtl_wbits_why gives, printf-style. */
void rtl_wbits_say_why(const char *fmt, ...)
        __attribute__((format(printf, 1, 2)));

/* Write-protect calls and scans made. */
void rtl_wbits_kernel_counts(uint64_t *protects, uint64_t *scans);

#endif
