/* Allocating sites (site.c): where a malloc-family call comes from, named
 * only when a rule's site glob or a log line needs the name, and the
 * counters per (site, rule). Also the text ranges of libc and the loader
 * (never selected) and of rtl itself (skipped in backtraces). */
#ifndef RTL_SITE_H
#define RTL_SITE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define RTL_NO_SITE 0u /* callsite 0 is "(other sites)" */

int rtl_site_init(void);
/* Whether the malloc-family call returns into libc or the loader. */
int rtl_site_in_libc(const void *caller);
/* The callsite of an allocation whose malloc call returns to caller
 * (operator new and its kin skipped); resolve: its name is needed now. */
uint32_t rtl_site_callsite(const void *caller, int resolve);
/* Whether rule i's site glob accepts the callsite (names it). */
int rtl_site_accepts(uint32_t cs, int rule);
/* Its "module!function" name if it is resolved already, else NULL: for a
 * signal handler, which must not resolve it. */
const char *rtl_site_name_ready(uint32_t cs); /* signal handler */
uintptr_t rtl_site_ip(uint32_t cs);
/* Whether ip lies in rtl's own libraries (the preload, librtl). Signal
 * handler. */
int rtl_site_in_rtl(uintptr_t ip);
/* "module!function+0xOFF" for a return address (a backtrace frame). */
void rtl_site_symbolise(uintptr_t ip, int with_offset, char *out, size_t len);

/* Per (callsite, rule) counters: a stats slot. The regions made and their
 * bytes, which every selected allocation adds to, are striped apart
 * (rtl_site_count_new). */
struct rtl_site_stats {
	_Atomic uint64_t key; /* callsite << 8 | rule + 1; 0 free */
	_Atomic uint64_t read_traps, write_traps;
	/* what rtlctl compare sets side by side (actions.c) */
	_Atomic uint64_t false_sharing, grants, granted_bytes, touched_bytes;
	/* dirty epochs (epoch.c, under its lock): blocks written, their
	 * bytes whole, the bytes that differ, cards of 128, 512 and 4096
	 * bytes holding a change */
	uint64_t dirty_regions, object_bytes, diff_bytes, card_bytes[3];
};
uint32_t rtl_site_slot(uint32_t cs, int rule);
struct rtl_site_stats *rtl_site_stats(uint32_t slot, uint32_t *cs, int *rule);
/* A region of size bytes made for slot, counted in this thread's stripe;
 * what the stripes sum to. */
void rtl_site_count_new(uint32_t slot, uint64_t size);
void rtl_site_made(uint32_t slot, uint64_t *regions, uint64_t *bytes);
uint32_t rtl_site_slots(void);         /* slots in use, slot 0 included */
uint32_t rtl_site_slot_at(uint32_t k); /* the k-th of them, k < slots */
void rtl_site_forked(void);
extern _Atomic uint64_t rtl_site_overflow; /* allocations not given a site */

#endif
