/* Regions on memory tags (tagged.c): their own arena, a private anonymous
 * PROT_MTE mapping (memory tags are not kept for shared mappings under
 * qemu-user, and the views are shared), handed out in 16-byte granules.
 *
 * A region's pointer carries a tag of 1..15 that never changes; its
 * granules carry that tag while it is read-write and tag 0 while it is
 * protected (none): every access through its pointer then faults with
 * SEGV_MTESERR at the granule. Free granules carry 0 too. Lookup from an
 * address (tagged or not) is a table of one record index per granule:
 * lock-free, for the trap path. */
#ifndef RTL_TAGGED_H
#define RTL_TAGGED_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tag/mte.h"
#include "core/util/export.h"
#include "core/util/lock.h"
#include <rtl/region.h>

struct rtl_tag_arena {
	uintptr_t base; /* untagged; 0 until the first tagged region */
	size_t size;
};
extern RTL_PRIVATE_API struct rtl_tag_arena rtl_tag_arena;

/* Whether a (tagged or not) lies in the tag arena. Signal handler. */
static inline int rtl_tag_owns(uintptr_t a)
{
	return rtl_mte_untag(a) - rtl_tag_arena.base < rtl_tag_arena.size;
}

/* Whether [p, p + len) overlaps the tag arena: the wrappers' check. */
static inline int rtl_tag_overlaps(uintptr_t p, size_t len)
{
	uintptr_t a = rtl_mte_untag(p), d = a - rtl_tag_arena.base;

	return len && rtl_tag_arena.size &&
	       (d < rtl_tag_arena.size || (a < rtl_tag_arena.base && a + len > rtl_tag_arena.base));
}

struct rtl_tag_region {
	_Atomic uint32_t gen; /* even: stable; odd: being made or freed */
	uint8_t tag;          /* the pointer's, 1..15 */
	_Atomic int prot;     /* PROT_NONE or PROT_READ | PROT_WRITE */
	uintptr_t lo;         /* first byte, untagged */
	size_t span;          /* bytes, whole granules */
	size_t size;          /* bytes asked for */
	_Atomic(region_handler_t) handler;
	_Atomic(void *) data;
	_Atomic uint64_t traps;
	struct rtl_lock lock; /* protection changes */
	uint32_t next_free;   /* spare records */
};

/* A region as a lock-free reader saw it. */
struct rtl_tag_found {
	struct rtl_tag_region *r;
	uint32_t gen;
};

/* The region whose span holds a (tagged or not): 0, or -1. Lock-free,
 * async-signal-safe. */
int rtl_tag_find(uintptr_t a, struct rtl_tag_found *f);

/* Whether f still describes a live region (its generation held). */
static inline int rtl_tag_still(const struct rtl_tag_found *f)
{
	return atomic_load_explicit(&f->r->gen, memory_order_acquire) == f->gen;
}

/* A new region of size bytes, zero-filled and read-write: its pointer,
 * tagged. NULL with errno (ENOMEM: the arena is full; ENOTSUP: no MTE). */
void *rtl_tag_alloc(size_t size);

/* End the region f found: its granules go back, tag 0. -1 (ENOENT) if it
 * was freed meanwhile. */
int rtl_tag_free(struct rtl_tag_found *f);

/* Give the region f found protection prot (PROT_NONE or PROT_READ |
 * PROT_WRITE): its granules retagged. No system call; any thread, and a
 * region handler. -1 with errno: ENOTSUP (PROT_READ alone), ENOENT. */
int rtl_tag_protect(struct rtl_tag_found *f, int prot);

/* In a forked child: the records' spin locks whose holders did not come
 * along (an epoch thread retagging at the fork) are free again. */
void rtl_tag_forked(void);

/* The region's pointer to its first byte (tagged). */
static inline uintptr_t rtl_tag_base(const struct rtl_tag_region *r)
{
	return rtl_mte_with_tag(r->lo, r->tag);
}

#endif
