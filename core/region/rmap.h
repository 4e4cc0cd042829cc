/* The region map: offset in the views -> region record, in O(1).
 *
 * A two-level radix table of pages. A page wholly inside one region points at
 * it; a page shared by regions points at a subtable of 64 granules of 64
 * bytes (regions start and end on 64-byte boundaries). Readers are lock-free
 * and may run in the trap handler; writers hold the shard locks of the pages
 * they change (records.h). A shared page's slot also predicts where its
 * regions' records lie, so that a lookup fetches the record and the
 * subtable together: one miss's wait, not two. */
#ifndef RTL_RMAP_H
#define RTL_RMAP_H

#include <stdint.h>

#include "core/region/region.h"

int rtl_rmap_init(uint64_t arena_size);

/* Map [r->lo, r->lo + r->span) to r if none of it is mapped: -1 with
 * EEXIST if some is, ENOMEM without memory (nothing mapped then); or unmap
 * it. */
int rtl_rmap_insert(struct rtl_region *r);
void rtl_rmap_remove(struct rtl_region *r);

/* Whether any region overlaps [lo, lo + len): for define's overlap check. */
int rtl_rmap_busy(uint64_t lo, uint64_t len);

/* The lowest offset in [off, end) that some region's span covers, or end.
 * Lock-free, skips unmapped pages whole. */
uint64_t rtl_rmap_next(uint64_t off, uint64_t end);

/* The record mapped at off, unvalidated (may be stale), or NULL. */
struct rtl_region *rtl_rmap_get(uint64_t off);

/* The record rtl_rmap_get prefetches for off on a shared page, from the
 * page's hint (rmap.c), or 0: for tests, it is never read. */
uintptr_t rtl_rmap_guess(uint64_t off);

#endif
