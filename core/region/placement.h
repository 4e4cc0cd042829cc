/* For code that places memory in the views itself (the preload's arenas)
 * and sets the protection of view pages itself (its mprotect): extents
 * reserved outside any region, memory given back, protection in place
 * ended over a range. Exported (RTL_PRIVATE); not for the trap path. */
#ifndef RTL_PLACEMENT_H
#define RTL_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>

#include "core/util/export.h"
#include <rtl/region.h>

/* Reserve an extent of the views for regions defined in place: returns its
 * address in the RW view, or NULL with errno; *got is its size (at least
 * size). region_define on memory inside the views is valid only within
 * such an extent. Give it back with rtl_unreserve (same size). */
RTL_PRIVATE_API void *rtl_reserve(size_t size, size_t *got);

/* The same for a pool its owner hands out bit by bit from the bottom: at
 * the top of the offset space, and not committed (views.h): the owner
 * calls rtl_views_commit for what it hands out, so that running off the
 * end of that ends in SIGBUS. */
RTL_PRIVATE_API void *rtl_reserve_pool(size_t size, size_t *got);
RTL_PRIVATE_API int rtl_unreserve(void *addr, size_t size);

/* region_define of [addr, addr + size), which lies in the views inside an
 * extent the caller reserved, with its handler (NULL: the default) and its
 * data set before any other thread can find it: what region_define,
 * region_handler and region_set_data do, with one lookup instead of three.
 * 0, or -1 with errno as region_define's (EINVAL also for memory outside
 * the views). */
RTL_PRIVATE_API int rtl_define_in_views(void *addr, size_t size,
                                        region_handler_t h, void *data);

/* What region_find tells of the region holding addr, and what lets
 * rtl_block_free end that region without looking it up again (the
 * preload's free: one lookup instead of two). Lock-free. */
struct rtl_block {
	void *base; /* in the view addr lies in */
	size_t size;
	size_t offset; /* of addr */
	void *data;
	void *region; /* private to the core */
	uint32_t gen;
};
RTL_PRIVATE_API int rtl_block_find(const void *addr, struct rtl_block *b);

/* region_free of the region b found; -1 with ENOENT if it is no longer
 * that one (freed meanwhile). */
RTL_PRIVATE_API int rtl_block_free(const struct rtl_block *b);

/* Give the physical memory of [addr, addr + len) back: afterwards it reads
 * as zero in every view. addr lies in the RW view, inside an extent the
 * caller reserved, and no region lies in that range. Lock-free (it may be
 * called under the caller's own locks). 0, or -1 with errno (EINVAL). */
RTL_PRIVATE_API int rtl_release(void *addr, size_t len);

/* End protection in place for every region whose home pages lie in
 * [addr, addr + len) (one view): their pages get their view's own
 * protection back and the regions move pointers again from now on, like
 * any region. For a program that sets the protection of those pages
 * itself. each(data) is called for each such region, outside its lock.
 * Returns how many. */
RTL_PRIVATE_API int rtl_in_place_end(void *addr, size_t len,
                                     void (*each)(void *data));

/* Bytes of the views' offset space handed out (regions and reserved
 * extents), for tests. */
RTL_PRIVATE_API size_t rtl_extent_bytes_in_use(void);

#endif
