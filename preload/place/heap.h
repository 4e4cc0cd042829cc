/* The selected heap (heap.c): arena memory with a record each, handed out
 * the way the rule's mechanism says. Callers hold the re-entrancy guard;
 * nothing here runs in a signal handler. */
#ifndef RTL_HEAP_H
#define RTL_HEAP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/region/placement.h"
#include "preload/engine/record.h"
#include "preload/engine/select.h"

/* Start: rtl's views known, arenas ready, at most max_regions live. */
int rtl_heap_init(uint64_t max_regions);

/* Whether p lies in rtl's views or the aliases (then only the heap may
 * free it). */
int rtl_heap_owns(const void *p);

/* A system call holds (delta 1) or lets go of (-1) the object holding p:
 * while held, no epoch re-protects it. Signal handler (lock-free lookups
 * and an atomic add). */
void rtl_heap_pin(const void *p, int delta);

/* A new selected object of size bytes aligned to align, as c says (its
 * mechanism and protection), from site (a stats slot): the pointer to hand
 * out, and its first byte in the RW view in *rw. NULL with errno if rtl
 * cannot take it (counted; the caller falls back to the next allocator). */
void *rtl_heap_alloc(size_t size, size_t align, int zero,
                     const struct rtl_choice *c, uint32_t site, void **rw);

/* A live object the heap made, found by the pointer it handed out. */
struct rtl_obj {
	void *rw; /* first byte in the RW view */
	size_t size;
	struct rtl_rec *rec;
	struct rtl_block region; /* a region's; .region NULL for an alias */
};
int rtl_heap_find(const void *p, struct rtl_obj *o); /* -1: not one */

/* End it and give its memory back. -1 if it was not live (a double free
 * racing). */
int rtl_heap_free(const struct rtl_obj *o);
/* data (a record) is no longer protected in place: the budget's count. */
void rtl_heap_left_in_place(void *data);

/* Resize in place when its memory already holds size bytes and it stays
 * with c: the new pointer, or NULL to do it by copying. */
void *rtl_heap_resize(const struct rtl_obj *o, size_t size,
                      const struct rtl_choice *c);

/* Copy n bytes between blocks (or a block and other memory) as rtl does
 * for realloc: whatever the blocks' protection. */
void rtl_heap_copy(void *dst, const void *src, size_t n);

/* Regions not yet freed (the other counts: tally.h). */
uint64_t rtl_heap_live(void);

#endif
