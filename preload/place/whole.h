/* Blocks of whole pages under page-table protection (whole.c): one more
 * copy of the arena's pool, where each such block of the auto mechanism
 * is reached through its own pages. */
#ifndef RTL_PLACE_WHOLE_H
#define RTL_PLACE_WHOLE_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of address space the copy takes. */
size_t rtl_whole_span(void);

/* Map the copy at base (a range of rtl_whole_span() bytes the caller
 * reserved). 0, or -1 with errno. */
int rtl_whole_init(uintptr_t base);

/* Whether the copy is mapped, and whether a holds part of it. */
int rtl_whole_on(void);
int rtl_whole_owns(uintptr_t a);

/* The block of whole pages [rw, rw + len) of the pool, at prot: its
 * address in the copy, or 0 with errno. */
uintptr_t rtl_whole_take(uintptr_t rw, size_t len, int prot);

/* The pages [addr, addr + len) of the copy get prot. 0, or -1 with errno.
 * Signal handler. */
int rtl_whole_protect(uintptr_t addr, size_t len, int prot);

/* The pages [addr, addr + len) get prot by a call over more than them:
 * what the copy remembers, no call. Signal handler. */
void rtl_whole_protected(uintptr_t addr, size_t len, int prot);

/* In a forked child, after rtl's views moved to a new memfd: the copy
 * mapped again over it, and its pages given their protections again, one
 * call per run of pages of one protection. */
void rtl_whole_forked(void);

#endif
