/* The region record, shared by the core's modules.
 *
 * Records come from a type-stable pool: a lock-free reader (the trap handler)
 * may hold a pointer to a record that is being freed or reused, and detects it
 * with the generation count: odd while the record changes, bumped on every
 * define and free. */
#ifndef RTL_REGION_INTERNAL_H
#define RTL_REGION_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/util/lock.h"
#include <rtl/region.h>

struct rtl_ptr;

enum {
	RTL_REGION_OWNED = 1,    /* its extent came from rtl's allocator */
	RTL_REGION_IN_PLACE = 2, /* protected in place in its home view */
};
#define RTL_REGION_HOME_SHIFT 8 /* home view of an in-place region */

struct rtl_region {
	/* First cache line: what a lookup and a trap read. */
	_Atomic uint32_t gen; /* even: stable; odd: being defined or freed */
	uint32_t flags;
	uint64_t lo;            /* offset of the first byte in the views */
	uint64_t span;          /* bytes rtl answers for: lookup and swizzle range */
	uint64_t size;          /* bytes the user asked for */
	_Atomic int view;       /* view of the current protection */
	_Atomic uint16_t mixed; /* MAP2: pointers in different views */
	uint16_t live;          /* defined (set under its shards) */
	_Atomic(region_handler_t) handler;
	_Atomic(void *) data;
	struct rtl_lock lock; /* protection state and bound pointers */

	/* Then bookkeeping: 96 bytes in all, a record every 96 (records.c),
	 * so that a lookup's fields (gen, lo, span) never straddle a line. */
	struct rtl_ptr *bptrs;   /* under lock */
	_Atomic uint64_t traps;  /* handler calls, for reports */
	struct rtl_region *next; /* spare list (records.c) */
	void *ext;               /* per-region state of other modules */
} __attribute__((aligned(32)));

/* A region as seen by a reader: the record and the generation it was valid
 * at, plus where the looked-up address was. */
struct rtl_found {
	struct rtl_region *r;
	uint32_t gen;
	int view;     /* view of the address */
	uint64_t off; /* offset of the address */
};

/* The home view of an in-place region (inplace.c), or -1. */
static inline int rtl_region_home(const struct rtl_region *r)
{
	uint32_t fl = __atomic_load_n(&r->flags, __ATOMIC_ACQUIRE);

	return fl & RTL_REGION_IN_PLACE ? (int)(fl >> RTL_REGION_HOME_SHIFT) & 3
	                                : -1;
}

/* The view whose protection an access through view v of r gets: the
 * region's own for its home pages when it is protected in place. */
static inline int rtl_region_view_at(const struct rtl_region *r, int v)
{
	return rtl_region_home(r) == v
	               ? atomic_load_explicit(&r->view, memory_order_acquire)
	               : v;
}

/* Serialises the extent allocator, the tracked list and what else is not
 * a region's own; defining and freeing a region take the shard locks of its
 * pages (records.h). Never taken on the trap path. */
extern pthread_mutex_t rtl_define_lock;

/* The default handler (region_handler(NULL, h)). */
extern _Atomic(region_handler_t) rtl_default_handler;

/* Find the region whose span holds address a (any view). Lock-free and
 * async-signal-safe. Returns 0 and fills *f, or -1 if none. */
int rtl_region_find(uintptr_t a, struct rtl_found *f);

/* Lock a found region and check it is still the same one; -1 (ENOENT) if
 * it was freed meanwhile, EDEADLK on re-entry. */
int rtl_region_lock(struct rtl_found *f);

/* Both: the region holding addr, locked; -1 with EINVAL (NULL), ENOENT (no
 * region) or as rtl_region_lock. */
int rtl_region_find_locked(const void *addr, struct rtl_found *f);

#endif
