/* The three views of one memory: NONE, RO and RW, side by side.
 *
 * A memfd of S bytes is mapped twice (read-only, read-write) behind a
 * PROT_NONE reservation of the same size. Offset o is at base + v*S + o in
 * view v; moving a pointer between views is one addition. The layout is
 * computed here and nowhere else: the preload and the system-call library
 * use these inline functions too (rtl_views is exported for them). */
#ifndef RTL_VIEWS_H
#define RTL_VIEWS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#include "core/util/export.h"

enum rtl_view {
	RTL_VIEW_NONE = 0,
	RTL_VIEW_RO = 1,
	RTL_VIEW_RW = 2,
};

/* Regions start and end on granules: the region map's resolution inside a
 * page, the extent allocator's smallest block, and the alignment that keeps
 * a 64-byte vector access around a region byte inside its region. */
#define RTL_GRANULE_SHIFT 6
#define RTL_GRANULE (1u << RTL_GRANULE_SHIFT)
#define RTL_NVIEWS 3

/* Where rtl puts its memory when the place is free: the same in every
 * process, far from where the kernel puts mappings (48 TiB; mmap's area
 * starts near 128 TiB, programs near 85 TiB), so that a seccomp filter
 * inherited across exec (interpose/sigsys.c) means the same range in the
 * new program. The preload's aliases and slots follow the views at the
 * next 1 TiB boundary. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RTL_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(RTL_TSAN)
#define RTL_HOME ((uintptr_t)0) /* ThreadSanitizer's layout: none there */
#else
#define RTL_HOME ((uintptr_t)0x300000000000)
#endif
#define RTL_HOME_ALIGN ((uintptr_t)1 << 40)

struct rtl_views {
	uintptr_t base; /* start of the NONE view */
	size_t size;    /* S: bytes per view */
	int fd;         /* the memfd behind RO and RW */
};

extern RTL_PRIVATE_API struct rtl_views rtl_views;

/* View holding address a, or -1 if a is outside the views. */
static inline int rtl_view_of(uintptr_t a)
{
	uintptr_t d = a - rtl_views.base; /* wraps for a < base */
	if (d >= RTL_NVIEWS * rtl_views.size)
		return -1;
	return d < rtl_views.size       ? RTL_VIEW_NONE
	       : d < 2 * rtl_views.size ? RTL_VIEW_RO
	                                : RTL_VIEW_RW;
}

/* Whether view's own protection allows a read (write 0) or a write. */
static inline int rtl_view_allows(int view, int write)
{
	/* A bit per view (view is 0..2): RW alone for a write, RO and RW
	 * for a read. Two instructions where the trap path asks. */
	return ((write ? 1u << RTL_VIEW_RW : 1u << RTL_VIEW_RO | 1u << RTL_VIEW_RW) >>
	        view) &
	       1;
}

static inline uintptr_t rtl_view_base(int view)
{
	return rtl_views.base + (uintptr_t)view * rtl_views.size;
}

/* The address of offset off in view v. */
static inline uintptr_t rtl_view_addr(int view, uint64_t off)
{
	return rtl_view_base(view) + off;
}

/* The offset of address a, which lies in view v. */
static inline uint64_t rtl_view_offset(uintptr_t a, int view)
{
	return a - rtl_view_base(view);
}

/* The same byte as a (in any view) through view v; a outside the views
 * stays as it is. */
static inline uintptr_t rtl_view_move(uintptr_t a, int view)
{
	int from = rtl_view_of(a);

	return from < 0 ? a : rtl_view_addr(view, rtl_view_offset(a, from));
}

/* Whether [a, a + len) overlaps the three views. */
static inline int rtl_views_overlap(uintptr_t a, size_t len)
{
	uintptr_t d = a - rtl_views.base, span = RTL_NVIEWS * rtl_views.size;

	return len && (d < span || d + len - 1 < span ||
	               (a < rtl_views.base && a + len > rtl_views.base));
}

/* The memfd covers offsets [0, committed) only: past what rtl has handed
 * out there is no file, so a program that runs off the end of its memory
 * gets SIGBUS there instead of populating the views' shared memory
 * (docs/internals.md, "Views"). rtl_views_commit grows the file to cover
 * [0, end) (never shrinks it), and opens the gap below end (below); 0, or
 * -1 with errno. Not for signal handlers (a mutex). */
RTL_PRIVATE_API int rtl_views_commit(uint64_t end);

/* A reservation at the top of the offset space starts at off (the
 * preload's pool): what lies between the bottom's memory and it is inside
 * the file once the top has memory, and is no one's. RO and RW keep it
 * PROT_NONE (the gap) until rtl_views_commit hands part of it out from
 * below, so that a program running into it faults instead of populating
 * shared memory (docs/internals.md, "Views"). 0, or -1 with errno. */
RTL_PRIVATE_API int rtl_views_reserve_top(uint64_t off);

/* Whether a lies in the gap, through any view (NONE has no memory there
 * either). Signal-safe. */
RTL_PRIVATE_API int rtl_views_in_gap(uintptr_t a);

/* Parse a size with an optional K/M/G/T suffix; -1 on bad input. */
int rtl_parse_size(const char *s, size_t *out);

/* Map the views; size from RTL_ARENA_SIZE or 64 GiB. -1 with errno. */
int rtl_views_init(void);

/* Clear [off, off + len) and give back the physical memory of its whole
 * pages: free extent memory always reads as zero. */
void rtl_views_release(uint64_t off, size_t len);

/* In a forked child: copy the populated parts of the views into a fresh memfd
 * and map it over RO and RW, so parent and child stop sharing. */
int rtl_views_fork_child(void);

/* The view for a protection (PROT_NONE, PROT_READ, PROT_READ|PROT_WRITE), or
 * -1 for anything else; and the protection of a view. */
static inline int rtl_prot_view(int prot)
{
	switch (prot) {
	case PROT_NONE: return RTL_VIEW_NONE;
	case PROT_READ: return RTL_VIEW_RO;
	case PROT_READ | PROT_WRITE: return RTL_VIEW_RW;
	}
	return -1;
}

static inline int rtl_view_prot(int view)
{
	return view == RTL_VIEW_NONE ? PROT_NONE
	       : view == RTL_VIEW_RO ? PROT_READ
	                             : PROT_READ | PROT_WRITE;
}

#endif
