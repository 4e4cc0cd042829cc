/* One record per selected allocation (record.c): its rule, site, size,
 * where it lives and its trap counts, from a pool that is never unmapped
 * so that a signal handler may read any record. */
#ifndef RTL_RECORD_H
#define RTL_RECORD_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/util/lock.h"

/* One per live selected block, so every byte counts (88 bytes: a
 * program of 10^6 small blocks has 10^6 of them). */
struct rtl_rec {
	_Atomic uint32_t next; /* free list: index + 1 */
	_Atomic uint8_t live;
	uint8_t mech;             /* RTL_MECH_* */
	_Atomic uint8_t in_place; /* RTL_REC_IN_PLACE: protected in place
	                             (heap.c); RTL_REC_PROGRAMS: in rtl's alias
	                             reservation, its pages' protection the
	                             program's own mprotect took over */
	_Atomic uint8_t touched;  /* it has trapped (actions.c) */
	_Atomic uint8_t written;  /* dirty: written since the last epoch */
	uint8_t wbits;            /* dirty by the kernel's written bits (heap.c) */
	uint16_t rule;
	uint32_t site;  /* stats slot (site.c) */
	uint32_t pages; /* alias: pages of its mapping */
	_Atomic uint32_t read_traps, write_traps;
	_Atomic uint32_t pins;   /* system calls using it now: no epoch
	                          re-protects it meanwhile */
	_Atomic int prot;        /* alias: current protection of the mapping;
	                          page: the block's own, whatever its pages' */
	_Atomic uint32_t queued; /* on its rule's list of blocks trapped since
	                            the last epoch (epoch.c): the next one's
	                            index + 1, RTL_REC_LAST; 0 when not */
	size_t size;
	uintptr_t addr;       /* the address the program was given */
	void *rw;             /* first byte in the RW view */
	uintptr_t alias;      /* alias, auto's slots, page: page-aligned start of
	                    the mapping it is reached through */
	struct rtl_lock lock; /* alias: mapping and twin changes */
	void *twin;           /* alias with dirty: contents at first write */
};

_Static_assert(sizeof(struct rtl_rec) == 88, "a record's bytes count");

#define RTL_REC_LAST UINT32_MAX /* the end of a list of queued records */
#define RTL_REC_IN_PLACE 1
#define RTL_REC_PROGRAMS 2

int rtl_rec_init(uint64_t cap);
struct rtl_rec *rtl_rec_new(void); /* NULL when the pool is exhausted */
void rtl_rec_free(struct rtl_rec *rec);
struct rtl_rec *rtl_rec_at(uint32_t index); /* signal handler */
uint32_t rtl_rec_index(const struct rtl_rec *rec);
uint32_t rtl_rec_count(void);             /* records ever used: iterate [0, count) */
void rtl_rec_lock(struct rtl_rec *rec);   /* spin; signal handler */
int rtl_rec_trylock(struct rtl_rec *rec); /* 0, or -1 if held */
void rtl_rec_unlock(struct rtl_rec *rec);

/* The regions with the most traps, freed ones included, unsorted, at most
 * max. Signal handler. */
struct rtl_top {
	uint32_t site;
	size_t size;
	uint32_t read_traps, write_traps;
	uintptr_t addr; /* as the program was given it */
	uint16_t rule;
};
size_t rtl_rec_top(struct rtl_top *out, size_t max);
void rtl_rec_forked(void);

#endif
