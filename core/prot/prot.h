/* The protection backend: every protection change rtl makes to memory of
 * its own goes through here (the preload's copies and aliases, regions
 * protected in place). Where the kernel has it and the mapping is one the
 * backend made, a change between read-only and read-write is a bit in the
 * page tables (pagetable.c): no mapping is split or merged, one system
 * call, and a write to a protected page is a SIGBUS in the writing thread,
 * which rtl takes as it takes SIGSEGV. Elsewhere, and for no access at
 * all, mprotect. Which backend runs, and why, is said once (rtl_prot_why).
 * Exported (RTL_PRIVATE) for the preload. */
#ifndef RTL_PROT_PROT_H
#define RTL_PROT_PROT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/util/export.h"

enum rtl_prot_backend {
	RTL_PROT_MPROTECT = 0,
	RTL_PROT_PAGE_TABLES = 1,
};

/* Choose the backend, once (later calls return the choice): page tables
 * unless RTL_PROTECT=mprotect, the kernel lacks them or refuses them (the
 * probe, pagetable.c). With page tables, rtl's handler takes SIGBUS from
 * here on. Not in a signal handler. */
RTL_PRIVATE_API int rtl_prot_start(void);

/* The choice (RTL_PROT_MPROTECT before rtl_prot_start), and a sentence
 * that says why. */
RTL_PRIVATE_API int rtl_prot_backend(void);
RTL_PRIVATE_API const char *rtl_prot_why(void);

/* [base, base + len) holds only mappings made by rtl_prot_map (the
 * preload's reservation): protection there may live in the page tables.
 * One span; set before the first rtl_prot_map. */
RTL_PRIVATE_API void rtl_prot_span(uintptr_t base, size_t len);

/* Whether a SIGBUS at addr may be a write to a page the backend protected
 * (page tables run, addr in the span). Signal handler. */
int rtl_prot_owns(uintptr_t addr);

/* len bytes of fd from off, mapped at `at` (MAP_SHARED | MAP_FIXED, inside
 * the span) with protection prot: under page tables read-write for the
 * mapping and prot in its page tables. 0, or -1 with errno. Under page
 * tables a mapping made read-write whose bounds are whole granules of the
 * span (counted from its start) is registered with the userfaultfd at its
 * first write-protection, not when made: until then its pages fault in
 * as any shared memory's. */
#define RTL_PROT_GRANULE ((size_t)1 << 30)

RTL_PRIVATE_API int rtl_prot_map(uintptr_t at, size_t len, int fd, off_t off, int prot);

/* [at, at + len) gets prot (PROT_NONE, PROT_READ, PROT_READ | PROT_WRITE).
 * Under page tables, in the span: read and read-write one write-protect
 * call (and an mprotect more where a page was left at no access); no
 * access an mprotect. Elsewhere one mprotect. 0, or -1 with errno. Signal
 * handler: system calls and atomics only. */
RTL_PRIVATE_API int rtl_prot_set(uintptr_t at, size_t len, int prot);

/* The backend's calls so far: write-protect calls, and mprotects (the
 * fallback's, no access, and regions protected in place). */
RTL_PRIVATE_API void rtl_prot_calls(uint64_t *page_tables, uint64_t *mprotects);

/* In a forked child, before its mappings are made again (fork.c): a
 * descriptor of its own. */
void rtl_prot_forked(void);

#endif
