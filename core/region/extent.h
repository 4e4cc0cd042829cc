/* Extents of the views' offset space, handed out by a buddy allocator.
 *
 * Blocks are powers of two from 64 bytes, aligned to their size. Regions get
 * a block strictly larger than their size, so one region's one-past-end
 * address is never the start of another, and a vector load of an aligned
 * 64-byte block that holds a region byte stays inside that region's block.
 * Not for the trap path: callers hold the core's define lock. */
#ifndef RTL_EXTENT_H
#define RTL_EXTENT_H

#include <stddef.h>
#include <stdint.h>

#include "core/region/views.h"

#define RTL_EXTENT_MIN RTL_GRANULE

int rtl_extent_init(size_t arena_size);

/* Keep [0, RTL_EXTENT_MIN) out of every block, for good (right after
 * init): the RO view's last bytes sit just below the RW view's first, and
 * past the committed part of the file (views.h) reading them is SIGBUS.
 * With the first granule held, a read just before a block in the RW view
 * (glibc's free of a pointer it never gave reads the chunk header there)
 * reads zeros, as it did when the file was whole. 0, or -1 with errno. */
int rtl_extent_hold_first(void);

/* Smallest block size that holds size bytes (0 if size is too large). */
size_t rtl_extent_block(size_t size);

/* Allocate a block of at least size bytes: its offset, or -1 (ENOMEM).
 * top: split off the upper half at each step, so that the first such
 * block of a fresh allocator ends at the top of the offset space. */
int64_t rtl_extent_alloc(size_t size);
int64_t rtl_extent_alloc_top(size_t size);

/* Return a block: size is the value rtl_extent_block gave for it. */
void rtl_extent_free(uint64_t off, size_t size);

/* Bytes currently handed out (for tests and reports). */
size_t rtl_extent_in_use(void);

#endif
