/* The seccomp filter of the system-call mechanism (seccomp_filter.c). */
#ifndef RTL_SECCOMP_FILTER_H
#define RTL_SECCOMP_FILTER_H

#include <linux/filter.h>
#include <stdint.h>

/* In si_errno of the SIGSYS a trap of this filter raises ("RT"), to tell
 * it from the program's own filters. */
#define RTL_SECCOMP_TAG 0x5254

#define RTL_FILTER_RANGES 2

struct rtl_filter_spec {
	/* rtl's memory, in 4 GiB units: [hi, hi + len) of the addresses'
	 * high words (len 0: unused). */
	uint32_t range_hi[RTL_FILTER_RANGES];
	uint32_t range_len[RTL_FILTER_RANGES];
	/* Calls made from [trampoline, trampoline + len) pass. */
	uint64_t trampoline;
	uint32_t trampoline_len;
};

/* Write the program into f (max instructions); how many, or -1 with
 * ENOSPC. */
int rtl_filter_build(const struct rtl_filter_spec *spec, struct sock_filter *f,
                     int max);

#endif
