/* jemalloc arenas over rtl's RW view (arena.c). */
#ifndef RTL_ARENA_H
#define RTL_ARENA_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Reserve the views' range for the arenas and create them. 0, or -1 with
 * errno. Called once, from the constructor, after rtl has started. */
int rtl_arena_init(void);

/* Memory from the arenas, in the RW view: at least size bytes aligned to
 * align (a power of two >= 64), zeroed if asked. NULL if exhausted. */
void *rtl_arena_alloc(size_t size, size_t align, int zero);
void rtl_arena_free(void *rw);
/* Whether rw lies in the arenas' range (not a region of the program's own
 * region_alloc, say). */
int rtl_arena_owns(const void *rw);
size_t rtl_arena_usable(const void *rw);
/* What an allocation of size bytes at align would really get. */
size_t rtl_arena_good_size(size_t size, size_t align);
/* Whether the allocation at rw has whole pages of its own, shared with no
 * other allocation: a large size class, or whole pages at a page
 * boundary. */
int rtl_arena_owns_pages(const void *rw);

/* The range the arenas carve from (in the RW view). */
void rtl_arena_pool(uintptr_t *lo, size_t *len);
/* How much of it, from its start, the arenas have taken so far. */
size_t rtl_arena_used(void);

/* Map the pool once more at `at` (a reservation of its length), shared
 * with the views, at protection prot: the copies through which the auto,
 * alias and page mechanisms reach their blocks. 0, or -1 with errno. */
int rtl_arena_map_copy(uintptr_t at, int prot);

/* Zeroed memory for a table sized by the pool (per page, per granule),
 * never freed; NORESERVE, so only what is touched costs. NULL if none. */
void *rtl_arena_table(size_t bytes);

/* Extents the hooks handed jemalloc, for the report and the tests. */
extern _Atomic uint64_t rtl_arena_extents;

#endif
